import { createRedactor, type Redactor, throwOptionError } from '@keel/core/adapter';
import { modelParts, nameLabel } from './label-values.js';

/**
 * The value of a label whose real value is left out to keep the set of values bounded (a response model past the
 * first few, a tool name past the cap): the GenAI conventions' fallback value, as for `error.type`.
 */
export const OVERFLOW_LABEL = '_OTHER';

/** Default of {@link LabelBoundsOptions.maxResponseModels}. */
export const DEFAULT_MAX_RESPONSE_MODELS = 4;
/** Default of {@link LabelBoundsOptions.maxToolNames}. */
export const DEFAULT_MAX_TOOL_NAMES = 64;
/** Default of {@link LabelBoundsOptions.maxTenants}. */
export const DEFAULT_MAX_TENANTS = 100;
/** The `keel.tenant` of runs that name no tenant. */
export const DEFAULT_TENANT_LABEL = 'default';

/** Most labels {@link LabelBounds} remembers having decided. */
const MAX_DECIDED = 1_024;

/** How label values that come from outside keel's configuration are bounded and cleaned. */
export interface LabelBoundsOptions {
  /**
   * Secret values (API keys of any shape: `gsk_...`, 32 hex digits, a short `sk-...`) removed, on top of the
   * credential patterns of `redactSecrets`, from every value a provider or a tool server reports (response models,
   * tool names) and, for tracing, from recorded content. Undefined and short entries (under 8 characters) are
   * skipped. Defaults to none: the patterns alone apply.
   */
  secrets?: readonly (string | null | undefined)[];
  /**
   * Distinct `gen_ai.response.model` values kept per requested model, besides the requested model itself (which a
   * response naming it always keeps); later ones are `_OTHER`. Defaults to 4.
   */
  maxResponseModels?: number;
  /**
   * Distinct `gen_ai.tool.name` values kept per agent (an MCP server may rename its tools at will, a model may call
   * tools that do not exist); later ones are `_OTHER`, and so is the name of a call to an unknown tool
   * (`tool.not_found`). Defaults to 64.
   */
  maxToolNames?: number;
  /**
   * Distinct `keel.tenant` values kept (the run option `tenant`: one per customer can be many); later ones are
   * `_OTHER`, the overflow bucket. Runs with no tenant are `default`. Defaults to 100.
   */
  maxTenants?: number;
}

/** The options of {@link LabelBoundsOptions}, for `rejectUnknownOptions` of the packages that take them. */
export const LABEL_BOUNDS_OPTIONS = ['secrets', 'maxResponseModels', 'maxToolNames', 'maxTenants'] as const;

/**
 * Label values that come from outside keel's configuration, bounded and redacted: the model a provider says
 * answered, and tool names (which MCP servers choose). A value is redacted (the known secrets, then the credential
 * patterns) before anything else, so a provider that reports the key as its model name never puts it in a label.
 * Each bound keeps the first values seen: telemetry of the same events in the same order gives the same labels.
 */
export class LabelBounds {
  readonly redactor: Redactor;
  private readonly maxResponseModels: number;
  private readonly maxToolNames: number;
  private readonly maxTenants: number;
  private readonly tenants = new FirstSeen();
  private readonly responseModels = new FirstSeen();
  private readonly toolNames = new FirstSeen();
  // A value's label never changes once decided, so the usual few are found without redacting them again (an event
  // costs three map lookups, no key built); a provider naming a new model in every response fills the memo, then each
  // is worked out anew.
  private readonly decided = new Decided();

  constructor(options: LabelBoundsOptions = {}, where = 'telemetry') {
    const { secrets = [], maxResponseModels, maxToolNames, maxTenants } = options;
    if (!Array.isArray(secrets) || secrets.some((secret) => !isOptionalString(secret)))
      throwOptionError({
        where: where,
        option: 'secrets',
        message: 'secrets must be an array of strings (undefined entries are skipped)',
      });
    this.redactor = createRedactor(secrets);
    this.maxResponseModels = count(
      where,
      'maxResponseModels',
      maxResponseModels,
      DEFAULT_MAX_RESPONSE_MODELS,
    );
    this.maxToolNames = count(where, 'maxToolNames', maxToolNames, DEFAULT_MAX_TOOL_NAMES);
    this.maxTenants = count(where, 'maxTenants', maxTenants, DEFAULT_MAX_TENANTS);
  }

  /**
   * `keel.tenant` for a run of `tenant` (undefined: `default`): the tenant, redacted and cut, when it is among the
   * first `maxTenants` seen; else `_OTHER`.
   */
  tenant(tenant: string | undefined): string {
    if (tenant === undefined) return DEFAULT_TENANT_LABEL;
    let label = this.decided.get('n', '', tenant);
    if (label === undefined) {
      const value = this.clean(tenant);
      label = this.tenants.keep('', value, this.maxTenants) ? value : OVERFLOW_LABEL;
      this.decided.set('n', '', tenant, label);
    }
    return label;
  }

  /**
   * `gen_ai.response.model` for a response to `requestKey` (`provider/model`): the response model, redacted and cut
   * to 128 characters, when it is the requested model or among the first `maxResponseModels` others seen for that
   * requested model; else `_OTHER`.
   */
  responseModel(requestKey: string, responseModel: string): string {
    let label = this.decided.get('m', requestKey, responseModel);
    if (label === undefined) {
      const value = this.clean(responseModel);
      label =
        value === modelParts(requestKey).model ||
        this.responseModels.keep(requestKey, value, this.maxResponseModels)
          ? value
          : OVERFLOW_LABEL;
      this.decided.set('m', requestKey, responseModel, label);
    }
    return label;
  }

  /**
   * `gen_ai.tool.name` for a call of `toolName` by a run of `agentName` (empty when unknown): the name, redacted and
   * cut, when it is among the first `maxToolNames` seen for that agent; `_OTHER` past them, and for a call of an
   * unknown tool (`errorCode` `tool.not_found`).
   */
  toolName(agentName: string, toolName: string, errorCode?: string): string {
    if (errorCode === 'tool.not_found') return OVERFLOW_LABEL;
    let label = this.decided.get('t', agentName, toolName);
    if (label === undefined) {
      const value = this.clean(toolName);
      label = this.toolNames.keep(agentName, value, this.maxToolNames) ? value : OVERFLOW_LABEL;
      this.decided.set('t', agentName, toolName, label);
    }
    return label;
  }

  private clean(value: string): string {
    // Redacted before it is cut, so that a cut cannot leave part of a secret the redactor would no longer know.
    return nameLabel(this.redactor.text(value));
  }
}

/**
 * Labels decided, by kind (`n` tenants, `m` response models, `t` tool names), scope (the requested model, the agent)
 * and value, at most {@link MAX_DECIDED} in all: a lookup builds no key.
 */
class Decided {
  private readonly byKind = new Map<string, Map<string, Map<string, string>>>();
  private count = 0;

  get(kind: string, scope: string, value: string): string | undefined {
    return this.byKind.get(kind)?.get(scope)?.get(value);
  }

  set(kind: string, scope: string, value: string, label: string): void {
    if (this.count >= MAX_DECIDED) return;
    let scopes = this.byKind.get(kind);
    if (scopes === undefined) {
      scopes = new Map();
      this.byKind.set(kind, scopes);
    }
    let values = scopes.get(scope);
    if (values === undefined) {
      values = new Map();
      scopes.set(scope, values);
    }
    this.count++;
    values.set(value, label);
  }
}

/** The first values seen in each scope, up to a bound per scope. */
class FirstSeen {
  private readonly scopes = new Map<string, Set<string>>();

  /** Whether `value` is (or now becomes) one of the first `max` values of `scope`. */
  keep(scope: string, value: string, max: number): boolean {
    let values = this.scopes.get(scope);
    if (values === undefined) {
      values = new Set();
      this.scopes.set(scope, values);
    }
    if (values.has(value)) return true;
    if (values.size >= max) return false;
    values.add(value);
    return true;
  }
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

function count(where: string, option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 0)
    throwOptionError({
      where: where,
      option: option,
      message: `${option} must be a whole number of at least 0`,
    });
  return value as number;
}
