import { KeelError } from '@keel/core';
import { isScalar, type LineCounter, type Node, type YAMLMap } from 'yaml';

/**
 * Reads fields of one agent file's YAML tree; every refusal is a `config.invalid` KeelError whose message starts
 * with `file:line:column: field`, and whose data holds `file`, `line`, `column` and `field`.
 */
export class FieldReader {
  /** `file:line:column` of every field read, by field path (`model.baseUrl`, `fallbacks[1]`). */
  readonly locations: Record<string, string> = {};

  constructor(
    private readonly path: string,
    private readonly lineCounter: LineCounter,
  ) {}

  /** `file:line:column` of a node (the file's start when there is none). */
  where(node: Node | null | undefined): string {
    const { line, col } = this.lineCounter.linePos(node?.range?.[0] ?? 0);
    return `${this.path}:${line}:${col}`;
  }

  /** Throws the refusal of `field`, located at `node`. */
  fail(node: Node | null | undefined, field: string, problem: string, guidance?: string): never {
    const { line, col } = this.lineCounter.linePos(node?.range?.[0] ?? 0);
    throw new KeelError('config.invalid', `${this.path}:${line}:${col}: ${field} ${problem}`, {
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
      return this.fail(node, field, 'must be a non-empty string');
    }
    return node.value;
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

  /** Refuses any key of `map` not in `allowed`. */
  rejectUnknownFields(map: YAMLMap, allowed: readonly string[], prefix: string): void {
    for (const pair of map.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!allowed.includes(key)) {
        this.fail(pair.key as Node, `${prefix}${key}`, `is not a known field (known: ${allowed.join(', ')})`);
      }
    }
  }
}
