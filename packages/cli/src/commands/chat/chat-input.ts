import { createInterface, type Interface } from 'node:readline';

/** Where `keel chat` reads what the user types. */
export interface ChatInput {
  /**
   * Shows `prompt` and reads one line. Resolves with undefined when the user leaves: Ctrl-C or Ctrl-D at the prompt,
   * the end of the input, or `close()`.
   */
  question(prompt: string): Promise<string | undefined>;
  /**
   * While a run goes: calls `onInterrupt` when the user presses Ctrl-C (what is typed meanwhile is dropped). Returns
   * the function that stops listening.
   */
  whileRunning(onInterrupt: () => void): () => void;
  /** Stops reading; a pending question resolves with undefined. */
  close(): void;
}

/** The streams a chat runs on: the process's, unless a caller passes others. */
export interface ChatStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  output: NodeJS.WritableStream;
}

/**
 * A terminal: each question gets a readline interface of its own (line editing, a shared history), closed once it is
 * answered, so that while a run goes nothing echoes into the answer being streamed; the terminal is then in raw mode
 * and only Ctrl-C is listened for.
 */
class TerminalInput implements ChatInput {
  private readonly history: string[] = [];
  private current: { readline: Interface; finish: (line: string | undefined) => void } | undefined;
  private closed = false;

  constructor(private readonly streams: ChatStreams) {}

  question(prompt: string): Promise<string | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const readline = createInterface({
        input: this.streams.input,
        output: this.streams.output,
        terminal: true,
        history: this.history,
        historySize: 200,
      });
      let settled = false;
      const finish = (line: string | undefined) => {
        if (settled) return;
        settled = true;
        this.current = undefined;
        readline.close();
        resolve(line);
      };
      this.current = { readline, finish };
      readline.on('SIGINT', () => {
        this.streams.output.write('\n');
        finish(undefined);
      });
      readline.on('close', () => finish(undefined));
      readline.question(prompt, (line) => finish(line));
    });
  }

  whileRunning(onInterrupt: () => void): () => void {
    const { input } = this.streams;
    const onData = (chunk: Buffer | string) => {
      if ((typeof chunk === 'string' ? chunk : chunk.toString('latin1')).includes('\u0003')) onInterrupt();
    };
    input.setRawMode?.(true);
    input.on('data', onData);
    input.resume();
    return () => {
      input.removeListener('data', onData);
      input.setRawMode?.(false);
      input.pause();
    };
  }

  close(): void {
    this.closed = true;
    this.current?.finish(undefined);
  }
}

/**
 * Lines from a pipe or a file (one readline interface for the whole chat, so that no buffered line is lost). Ctrl-C
 * reaches the process as SIGINT, which the CLI turns into its abort signal: nothing to listen for here.
 */
class LineInput implements ChatInput {
  private readonly lines: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private ended = false;
  private readonly readline: Interface;

  /** `show`: writes prompts, and each line read after its prompt (a transcript); undefined for none. */
  constructor(
    streams: ChatStreams,
    private readonly show: ((text: string) => void) | undefined,
  ) {
    this.readline = createInterface({ input: streams.input, terminal: false });
    this.readline.on('line', (line) => {
      if (this.waiting === undefined) this.lines.push(line);
      else this.answer(line);
    });
    this.readline.on('close', () => {
      this.ended = true;
      this.answer(undefined);
    });
  }

  question(prompt: string): Promise<string | undefined> {
    this.show?.(prompt);
    const next = this.lines.shift();
    if (next !== undefined) {
      this.show?.(`${next}\n`);
      return Promise.resolve(next);
    }
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  whileRunning(): () => void {
    return () => undefined;
  }

  close(): void {
    this.readline.close();
  }

  private answer(line: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting === undefined) return;
    if (line !== undefined) this.show?.(`${line}\n`);
    waiting(line);
  }
}

/**
 * The chat's input: a terminal (line editing, Ctrl-C handled in raw mode) when the input is a TTY and the output is
 * for a person, else plain lines (`--json`, pipes). Read from a pipe, prompts and the lines read are written with
 * `show` for a person to follow (undefined: not at all, as with `--json`).
 */
export function chatInput(streams: ChatStreams, show: ((text: string) => void) | undefined): ChatInput {
  if (streams.input.isTTY === true && show !== undefined) return new TerminalInput(streams);
  return new LineInput(streams, show);
}
