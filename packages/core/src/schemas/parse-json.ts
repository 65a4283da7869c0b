/** Where and why a text is not valid JSON. `line` and `column` start at 1; `position` is a 0-based offset. */
export interface JsonSyntaxError {
  message: string;
  position: number;
  line: number;
  column: number;
}

/** The outcome of {@link parseJson}. */
export type JsonParseResult = { success: true; value: unknown } | { success: false; error: JsonSyntaxError };

/** Deepest nesting the syntax scanner follows before it reports the text as too deep. */
const MAX_SCAN_DEPTH = 1_000;

/**
 * Parses JSON text. On failure the error names the first offending position with line and column, the same on
 * every Node version (V8's own messages vary between versions and do not always carry a position).
 *
 * @example
 *   const parsed = parseJson('{"city": }');
 *   if (!parsed.success) parsed.error.message; // "Unexpected character '}' at position 9 (line 1, column 10)"
 */
export function parseJson(text: string): JsonParseResult {
  try {
    return { success: true, value: JSON.parse(text) };
  } catch (error) {
    // The fast path failed: scan again, only to locate the fault precisely.
    const fault = new Scanner(text).findFault();
    if (fault !== undefined) return { success: false, error: locate(text, fault.position, fault.reason) };
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    return { success: false, error: locate(text, position ? Number(position[1]) : 0, message) };
  }
}

function locate(text: string, position: number, reason: string): JsonSyntaxError {
  let line = 1;
  let lineStart = 0;
  for (let index = 0; index < position && index < text.length; index++) {
    if (text.charCodeAt(index) === 10) {
      line++;
      lineStart = index + 1;
    }
  }
  const column = position - lineStart + 1;
  return {
    message: `${reason} at position ${position} (line ${line}, column ${column})`,
    position,
    line,
    column,
  };
}

interface Fault {
  position: number;
  reason: string;
}

class FaultFound {
  constructor(readonly fault: Fault) {}
}

/** A JSON syntax checker that builds no values: it exists to say where the text went wrong. */
class Scanner {
  private index = 0;

  constructor(private readonly text: string) {}

  findFault(): Fault | undefined {
    try {
      this.skipWhitespace();
      this.value(0);
      this.skipWhitespace();
      if (this.index < this.text.length) this.fail('Unexpected text after the JSON value');
      return undefined;
    } catch (error) {
      if (error instanceof FaultFound) return error.fault;
      throw error;
    }
  }

  private fail(reason: string, position = this.index): never {
    throw new FaultFound({ position, reason });
  }

  private unexpected(expected?: string): never {
    if (this.index >= this.text.length) {
      this.fail(
        expected === undefined ? 'Unexpected end of input' : `Unexpected end of input, expected ${expected}`,
      );
    }
    const character = JSON.stringify(this.text[this.index]).slice(1, -1);
    this.fail(
      expected === undefined
        ? `Unexpected character '${character}'`
        : `Expected ${expected} but found '${character}'`,
    );
  }

  private skipWhitespace(): void {
    while (this.index < this.text.length) {
      const code = this.text.charCodeAt(this.index);
      if (code !== 32 && code !== 9 && code !== 10 && code !== 13) return;
      this.index++;
    }
  }

  private value(depth: number): void {
    if (depth > MAX_SCAN_DEPTH) this.fail(`Nesting deeper than ${MAX_SCAN_DEPTH} levels`);
    const character = this.text[this.index];
    if (character === '{') this.object(depth);
    else if (character === '[') this.array(depth);
    else if (character === '"') this.string();
    else if (character === '-' || (character !== undefined && character >= '0' && character <= '9'))
      this.number();
    else this.literal();
  }

  private literal(): void {
    for (const literal of ['true', 'false', 'null']) {
      if (this.text.startsWith(literal, this.index)) {
        this.index += literal.length;
        return;
      }
    }
    this.unexpected();
  }

  private object(depth: number): void {
    this.index++;
    this.skipWhitespace();
    if (this.text[this.index] === '}') {
      this.index++;
      return;
    }
    for (;;) {
      if (this.text[this.index] !== '"') this.unexpected('a double-quoted property name');
      this.string();
      this.skipWhitespace();
      if (this.text[this.index] !== ':') this.unexpected("':' after the property name");
      this.index++;
      this.skipWhitespace();
      this.value(depth + 1);
      this.skipWhitespace();
      const next = this.text[this.index];
      if (next === '}') {
        this.index++;
        return;
      }
      if (next !== ',') this.unexpected("',' or '}' after the property value");
      const comma = this.index;
      this.index++;
      this.skipWhitespace();
      if (this.text[this.index] === '}') this.fail('Trailing comma before }', comma);
    }
  }

  private array(depth: number): void {
    this.index++;
    this.skipWhitespace();
    if (this.text[this.index] === ']') {
      this.index++;
      return;
    }
    for (;;) {
      this.value(depth + 1);
      this.skipWhitespace();
      const next = this.text[this.index];
      if (next === ']') {
        this.index++;
        return;
      }
      if (next !== ',') this.unexpected("',' or ']' after the array element");
      const comma = this.index;
      this.index++;
      this.skipWhitespace();
      if (this.text[this.index] === ']') this.fail('Trailing comma before ]', comma);
    }
  }

  private string(): void {
    const start = this.index;
    this.index++;
    while (this.index < this.text.length) {
      const code = this.text.charCodeAt(this.index);
      if (code === 34) {
        this.index++;
        return;
      }
      if (code < 32) this.fail('Unescaped control character in string');
      if (code === 92) {
        const escaped = this.text[this.index + 1];
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.index + 2, this.index + 6))) {
            this.fail('Invalid \\u escape in string');
          }
          this.index += 6;
          continue;
        }
        if (escaped === undefined || !'"\\/bfnrt'.includes(escaped)) this.fail('Invalid escape in string');
        this.index += 2;
        continue;
      }
      this.index++;
    }
    this.fail('Unterminated string', start);
  }

  private number(): void {
    const match = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.index;
    const found = match.exec(this.text);
    if (found === null) this.fail('Invalid number');
    this.index += found[0].length;
    // "01" or "1." parse as a number followed by junk; name the junk.
    const next = this.text[this.index];
    if (next !== undefined && /[0-9.eE]/.test(next)) this.fail('Invalid number');
  }
}
