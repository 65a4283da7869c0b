import { type JsonValue, KeelError } from '@keel/core';
import { closestName } from '@keel/core/adapter';
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  type LineCounter,
  type Node,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';

/**
 * Reads fields of one agent file's YAML tree; every refusal is a `config.invalid` KeelError whose message starts
 * with `file:line:column: field`, and whose data holds `file`, `line`, `column` and `field`. A refusal inside
 * {@link FieldReader.attempt} is recorded and reading goes on, so that {@link FieldReader.finish} reports every
 * mistake of the file at once.
 */
export class FieldReader {
  /** `file:line:column` of every field read, by field path (`model.baseUrl`, `fallbacks[1]`). */
  readonly locations: Record<string, string> = {};
  /** The refusals recorded so far, in the order they were met. */
  private readonly mistakes: KeelError[] = [];

  constructor(
    readonly path: string,
    private readonly lineCounter: LineCounter,
    private readonly document: Document,
  ) {}

  /** `file:line:column` of a node (the file's start when there is none). */
  where(node: Node | null | undefined): string {
    const { line, col } = this.lineCounter.linePos(node?.range?.[0] ?? 0);
    return `${this.path}:${line}:${col}`;
  }

  /** Throws the refusal of `field`, located at `node`. */
  fail(node: Node | null | undefined, field: string, problem: string, guidance?: string): never {
    throw this.refusal(node, field, problem, guidance);
  }

  /** Records the refusal of `field`, located at `node`, and goes on reading. */
  record(node: Node | null | undefined, field: string, problem: string, guidance?: string): void {
    this.mistakes.push(this.refusal(node, field, problem, guidance));
  }

  /**
   * Runs `read` (one field, one list item); a `config.invalid` refusal it throws is recorded and undefined returned,
   * so that the fields after it are read too. Any other error goes through.
   */
  attempt<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (error) {
      if (!KeelError.isInstance(error) || error.code !== 'config.invalid') throw error;
      this.mistakes.push(error);
      return undefined;
    }
  }

  /**
   * Throws what was recorded: the one refusal as it is, or, for several, one `config.invalid` whose message is
   * theirs, a line each (`file:line:column: field problem`), and whose data holds the first's `file`, `line`, `column`
   * and `field`, and all of them in `mistakes` (each with its `message`).
   */
  finish(): void {
    const [first, ...rest] = this.mistakes;
    if (first === undefined) return;
    if (rest.length === 0) throw first;
    const mistakes = this.mistakes.map(
      (mistake): JsonValue => ({
        ...mistake.data,
        message: mistake.message,
        ...(mistake.guidance === undefined ? {} : { guidance: mistake.guidance }),
      }),
    );
    const guidance = this.mistakes.flatMap((mistake) =>
      mistake.guidance === undefined ? [] : [mistake.guidance],
    );
    throw new KeelError('config.invalid', this.mistakes.map((mistake) => mistake.message).join('\n'), {
      data: { ...first.data, mistakes },
      ...(guidance.length === 0 ? {} : { guidance: [...new Set(guidance)].join(' ') }),
    });
  }

  private refusal(
    node: Node | null | undefined,
    field: string,
    problem: string,
    guidance?: string,
  ): KeelError {
    const { line, col } = this.lineCounter.linePos(node?.range?.[0] ?? 0);
    return new KeelError('config.invalid', `${this.path}:${line}:${col}: ${field} ${problem}`, {
      data: { file: this.path, line, column: col, field },
      ...(guidance === undefined ? {} : { guidance }),
    });
  }

  /** The node of `key` in `map`, its location recorded as `field`. */
  node(map: YAMLMap, key: string, field: string): Node | undefined {
    const node = map.get(key, true) as Node | undefined;
    if (node !== undefined) this.locations[field] = this.where(node);
    return node;
  }

  /** A non-empty string field; `required` makes its absence a refusal. */
  string(map: YAMLMap, key: string, field: string, required: boolean): string | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return required ? this.fail(map, field, 'is required') : undefined;
    if (!isScalar(node) || typeof node.value !== 'string' || node.value.trim() === '') {
      return this.fail(node, field, `must be a non-empty string${placeholderHint(node)}`);
    }
    return node.value;
  }

  /** A boolean field. */
  boolean(map: YAMLMap, key: string, field: string): boolean | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return undefined;
    if (!isScalar(node) || typeof node.value !== 'boolean')
      return this.fail(node, field, 'must be true or false');
    return node.value;
  }

  /** An integer field from `minimum` to `maximum`. */
  integer(map: YAMLMap, key: string, field: string, minimum: number, maximum: number): number | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return undefined;
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum || value > maximum) {
      const got = isScalar(node) ? JSON.stringify(node.value) : 'a list or mapping';
      return this.fail(node, field, `must be an integer from ${minimum} to ${maximum} (got ${got})`);
    }
    return value;
  }

  /** A mapping field. */
  mapping(map: YAMLMap, key: string, field: string): YAMLMap | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return undefined;
    if (!isMap(node)) return this.fail(node, field, 'must be a mapping');
    return node;
  }

  /** A list field. */
  list(map: YAMLMap, key: string, field: string, what: string): YAMLSeq | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return undefined;
    if (!isSeq(node)) return this.fail(node, field, `must be a list of ${what}`);
    return node;
  }

  /** A list of non-empty strings, each checked by `check` (which returns a problem, or undefined). */
  stringList(
    map: YAMLMap,
    key: string,
    field: string,
    what: string,
    check: (value: string) => string | undefined = () => undefined,
  ): string[] | undefined {
    const list = this.list(map, key, field, what);
    return list?.items.map((item, index) => {
      const node = item as Node;
      const itemField = `${field}[${index}]`;
      this.locations[itemField] = this.where(node);
      if (!isScalar(node) || typeof node.value !== 'string' || node.value === '')
        return this.fail(node, itemField, `must be one of ${what}${placeholderHint(node)}`);
      const problem = check(node.value);
      if (problem !== undefined) this.fail(node, itemField, problem);
      return node.value;
    });
  }

  /** The plain value of a node (mappings, lists, scalars), aliases resolved (at most 100). */
  value(node: Node): unknown {
    return node.toJS(this.document, { maxAliasCount: 100 });
  }

  /** A positive integer field, at most `maximum`. */
  positiveInteger(
    map: YAMLMap,
    key: string,
    field: string,
    maximum = Number.MAX_SAFE_INTEGER,
  ): number | undefined {
    const node = this.node(map, key, field);
    if (node === undefined) return undefined;
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > maximum) {
      const got = isScalar(node) ? JSON.stringify(node.value) : 'a list or mapping';
      return this.fail(node, field, `must be a positive integer of at most ${maximum} (got ${got})`);
    }
    return value;
  }

  /** The key names of `map`, in order. */
  keys(map: YAMLMap): string[] {
    return map.items.map((pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key)));
  }

  /** Records a refusal for each key of `map` not in `allowed`, with the known field it is closest to. */
  rejectUnknownFields(map: YAMLMap, allowed: readonly string[], prefix: string): void {
    for (const pair of map.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!allowed.includes(key)) {
        const meant = closestName(key, allowed);
        this.record(
          pair.key as Node,
          `${prefix}${key}`,
          `is not a known field (${meant === undefined ? '' : `did you mean ${prefix}${meant}? `}known: ${allowed.join(', ')})`,
        );
      }
    }
  }
}

/** A hint for a placeholder YAML read as a mapping: `{count}` unquoted is the mapping `{ count: null }`. */
export function placeholderHint(node: Node | null | undefined): string {
  if (!isMap(node) || node.items.length !== 1) return '';
  const pair = node.items[0]!;
  if (!isScalar(pair.key) || (pair.value !== null && !(isScalar(pair.value) && pair.value.value === null)))
    return '';
  const name = String(pair.key.value);
  return ` (quote placeholders: write "{${name}}", since YAML reads {${name}} without quotes as a mapping)`;
}
