import { type LabelBounds, modelParts } from '@keel/telemetry';
import type { Attributes } from '@opentelemetry/api';

/** What a `chat` span needs of a model key (`provider/model`), made once per model. */
export interface ModelTarget {
  readonly spanName: string;
  /** What a `chat` span starts with: the attributes a sampler may read (the conventions' list). */
  readonly startAttributes: Attributes;
  /** What the run's span says of the model of its first attempt. */
  readonly rootAttributes: Attributes;
}

/** What an `execute_tool` span needs of a tool of an agent, made once per tool. */
export interface ToolTarget {
  /** `execute_tool <tool>`, the tool's bounded label in it (see `LabelBounds.toolName`). */
  readonly spanName: string;
  /** What an `execute_tool` span starts with: the operation, the tool's (redacted) name and type. */
  readonly startAttributes: Attributes;
}

/** Most targets kept (models and tools together); past it, each is made anew when asked for. */
const MAX_TARGETS = 1_024;

/**
 * The span names and start attributes of each model and each tool of each agent, made at their first call and kept
 * (a bounded set), so that a step builds no attribute object for what depends only on the model or the tool. The
 * objects are frozen and shared: the SDK copies what it keeps.
 */
export class SpanTargets {
  private readonly models = new Map<string, ModelTarget>();
  private readonly tools = new Map<string, Map<string, ToolTarget>>();
  private kept = 0;

  constructor(private readonly bounds: LabelBounds) {}

  model(key: string): ModelTarget {
    let target = this.models.get(key);
    if (target === undefined) {
      const { provider, model } = modelParts(key);
      target = {
        spanName: `chat ${model}`,
        startAttributes: Object.freeze({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': provider,
          'gen_ai.request.model': model,
        }),
        rootAttributes: Object.freeze({ 'gen_ai.provider.name': provider, 'gen_ai.request.model': model }),
      };
      if (this.kept < MAX_TARGETS) {
        this.kept++;
        this.models.set(key, target);
      }
    }
    return target;
  }

  tool(agentName: string, toolName: string): ToolTarget {
    let byName = this.tools.get(agentName);
    let target = byName?.get(toolName);
    if (target !== undefined) return target;
    target = {
      spanName: `execute_tool ${this.bounds.toolName(agentName, toolName)}`,
      startAttributes: Object.freeze({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': this.bounds.redactor.text(toolName),
        'gen_ai.tool.type': 'function',
      }),
    };
    if (this.kept < MAX_TARGETS) {
      this.kept++;
      if (byName === undefined) {
        byName = new Map();
        this.tools.set(agentName, byName);
      }
      byName.set(toolName, target);
    }
    return target;
  }
}
