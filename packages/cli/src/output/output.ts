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

/** An Output writing to the process's streams; a line written after its reader left is dropped (see {@link endQuietlyWhenClosed}). */
export function processOutput(environment: NodeJS.ProcessEnv): Output {
  return {
    out: (line) => writeIfOpen(process.stdout, `${line}\n`),
    error: (line) => writeIfOpen(process.stderr, `${line}\n`),
    colour: process.stdout.isTTY === true && environment.NO_COLOR === undefined,
  };
}

function writeIfOpen(stream: NodeJS.WriteStream, text: string): void {
  if (!stream.destroyed && !stream.writableEnded) stream.write(text);
}

let watching = false;

/**
 * Makes a closed stdout or stderr (`keel runs list | head -1`: the reader left) end the command quietly, with no
 * `EPIPE` stack trace: the stream's write errors are swallowed from then on, later lines are dropped, and `onClosed`
 * is called once (the CLI cancels the command with it: a run ends `cancelled`, a server stops). The listeners stay
 * for the life of the process (a write may fail after the command returned); watching twice is a no-op.
 */
export function endQuietlyWhenClosed(onClosed: () => void): void {
  if (watching) return;
  watching = true;
  let closed = false;
  const onError = (error: NodeJS.ErrnoException) => {
    if (closed) return;
    closed = true;
    // Any error of a standard stream (EPIPE, ERR_STREAM_DESTROYED, EIO from a vanished terminal) means nobody reads.
    void error;
    onClosed();
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', onError);
}
