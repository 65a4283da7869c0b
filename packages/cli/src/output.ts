/** Where the CLI writes: injected so tests can read what a command printed. */
export interface Output {
  out(line: string): void;
  error(line: string): void;
  /** Whether to use colour (a TTY without NO_COLOR). */
  colour: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, grey: 90, bold: 1 } as const;

/** Wraps `text` in an ANSI colour when the output wants colour. */
export function paint(output: Output, colour: keyof typeof CODES, text: string): string {
  return output.colour ? `\u001b[${CODES[colour]}m${text}\u001b[0m` : text;
}

/** An Output writing to the process's streams. */
export function processOutput(environment: NodeJS.ProcessEnv): Output {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    error: (line) => process.stderr.write(`${line}\n`),
    colour: process.stdout.isTTY === true && environment.NO_COLOR === undefined,
  };
}
