// `keel chat` driven in a real terminal: the built binary runs in a tmux pane (its own tmux server), keys are sent
// with send-keys and the screen is read with capture-pane, polled until what is awaited shows (bounded, no fixed
// sleeps). Each test has a scratch directory with its own SQLite store; agent files turn retries' waits off.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEEL_BINARY, type KeelOutcome, runKeel } from '../../test-support/keel-cli.js';

const directory = mkdtempSync(join(tmpdir(), 'keel-chat-'));
// A tmux server per test: a server being killed after one test never meets the next test's first command.
let servers = 0;
let socket = '';

afterAll(() => rmSync(directory, { recursive: true, force: true }));
beforeEach(() => {
  socket = `keel-chat-test-${process.pid}-${servers++}`;
});
afterEach(() => {
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // No server left: every pane had ended.
  }
});

writeFileSync(
  join(directory, 'trip.yaml'),
  [
    'name: trip',
    'instructions: You help travellers.',
    // The primary fails twice (a retry, then a fallback), then answers.
    'model: { provider: simulated, name: sim-primary, faults: "sequence=server_error>overloaded" }',
    'fallbacks: [simulated:sim-fallback]',
    'tools: [get_weather]',
    'retry: { maxAttempts: 2 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'support.yaml'),
  [
    'name: support',
    'model: simulated:sim-primary',
    'tools: [create_ticket]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);
writeFileSync(
  join(directory, 'slow.yaml'),
  [
    'name: slow',
    // The fourth request never answers: the second turn hangs after its tool call.
    'model: { provider: simulated, name: sim-primary, faults: "sequence=none>none>none>hang" }',
    'tools: [get_weather]',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

writeFileSync(
  join(directory, 'stuck.yaml'),
  [
    'name: stuck',
    // The first request never answers.
    'model: { provider: simulated, name: sim-primary, faults: "sequence=hang" }',
    'retry: { maxAttempts: 1 }',
  ].join('\n'),
);

/** A terminal of 120 x 40 running a command in the scratch directory. */
class Pane {
  constructor(private readonly name: string) {}

  static start(name: string, command: string): Pane {
    tmux(
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      '120',
      '-y',
      '40',
      '-c',
      directory,
      // The shell prints the exit status, then keeps the pane (and what it shows) until the server is killed.
      `env NO_COLOR=1 ${command}; echo "[exit $?]"; sleep 600`,
    );
    return new Pane(name);
  }

  /** Types text (literally), then presses Enter. */
  type(text: string): void {
    tmux('send-keys', '-t', this.name, '-l', text);
    tmux('send-keys', '-t', this.name, 'Enter');
  }

  /** Presses keys such as `C-c`. */
  press(key: string): void {
    tmux('send-keys', '-t', this.name, key);
  }

  /** The screen and its scrollback. */
  text(): string {
    return tmux('capture-pane', '-p', '-J', '-S', '-500', '-t', this.name);
  }

  /** Waits until `pattern` shows `count` times (at least); returns the screen. */
  async waitFor(pattern: RegExp, count = 1, timeoutMs = 15_000): Promise<string> {
    const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.text();
      if ((text.match(global)?.length ?? 0) >= count) return text;
      if (Date.now() > deadline)
        throw new Error(`Timed out waiting for ${pattern} ×${count}; the pane shows:\n${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Waits for the command to end; resolves with its exit status (which the pane's shell prints). */
  async exitStatus(timeoutMs = 15_000): Promise<number> {
    const screen = await this.waitFor(/^\[exit \d+\]$/m, 1, timeoutMs);
    return Number(/^\[exit (\d+)\]$/m.exec(screen)![1]);
  }
}

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
}

/** `keel ...` as a child process in the scratch directory: its exit code and output. */
async function keel(...args: string[]): Promise<KeelOutcome> {
  return runKeel(directory, ...args);
}

/** A session's turns, as `keel sessions show --json` prints them. */
async function turnsOf(
  sessionId: string,
): Promise<Array<{ runId: string; messages: Array<Record<string, string>> }>> {
  const shown = await keel('sessions', 'show', sessionId, '--json');
  expect(shown.stderr).toBe('');
  return JSON.parse(shown.stdout).turns;
}

const PROMPT = /^you ›/gm;
const chat = (file: string, sessionId: string) => `node ${KEEL_BINARY} chat ${file} --session ${sessionId}`;

describe('keel chat in a terminal', () => {
  it('holds a two-turn conversation with tool calls, retries and fallbacks inline, then resumes it in a new process', async () => {
    const first = Pane.start('trip', chat('trip.yaml', 'trip-1'));
    let screen = await first.waitFor(PROMPT);
    expect(screen).toMatch(
      /^keel chat trip {2}session trip-1 {2}models simulated\/sim-primary → simulated\/sim-fallback/m,
    );
    expect(screen).toContain('come back to this conversation with: keel chat trip.yaml --session trip-1');
    // The file's own faults apply, and the start line says so.
    expect(screen).toContain(
      'offline simulated provider · faults sim-primary sequence=server_error>overloaded (agent file) · seed 1',
    );

    first.type('Weather in Paris?');
    screen = await first.waitFor(PROMPT, 2);
    expect(screen).toMatch(/↻ retrying model simulated\/sim-primary after provider\.server_error in \d+ ms/);
    expect(screen).toMatch(
      /⇢ falling back from simulated\/sim-primary to simulated\/sim-fallback after provider\.overloaded/,
    );
    expect(screen).toMatch(/⚙ get_weather …\n {2}✓ get_weather \(\d+ ms\)/);
    expect(screen).toMatch(/^agent › Here is what I found: get_weather returned .*"city":"Paris"/m);

    first.type('Weather in Oslo?');
    screen = await first.waitFor(PROMPT, 3);
    expect(screen).toMatch(/^agent › Here is what I found: get_weather returned .*"city":"Oslo"/m);
    first.press('C-d');
    expect(await first.exitStatus()).toBe(0);
    expect(first.text()).toContain(
      'session trip-1 kept; come back with: keel chat trip.yaml --session trip-1',
    );

    let turns = await turnsOf('trip-1');
    expect(turns.map((turn) => turn.messages.map((message) => message.role))).toEqual([
      ['user', 'assistant', 'tool', 'assistant'],
      ['user', 'assistant', 'tool', 'assistant'],
    ]);
    expect(turns[1]!.messages[0]).toEqual({ role: 'user', content: 'Weather in Oslo?' });

    // Another process, on the same session: it shows where the conversation was, and the model is sent all of it.
    const second = Pane.start('trip-again', chat('trip.yaml', 'trip-1'));
    screen = await second.waitFor(PROMPT);
    expect(screen).toContain('resuming session trip-1: 2 turns so far; the last one:');
    expect(screen).toMatch(/^you › Weather in Oslo\?$/m);
    second.type('Weather in Rome?');
    await second.waitFor(PROMPT, 3);
    second.press('C-c');
    expect(await second.exitStatus()).toBe(0);
    turns = await turnsOf('trip-1');
    expect(turns).toHaveLength(3);
    const run = JSON.parse((await keel('runs', 'show', turns[2]!.runId, '--json')).stdout).run;
    const sent = run.state.messages.filter((message: { role: string }) => message.role === 'user');
    expect(sent.map((message: { content: string }) => message.content)).toEqual([
      'Weather in Paris?',
      'Weather in Oslo?',
      'Weather in Rome?',
    ]);
  }, 60_000);

  it('asks for approvals inline: a yes runs the call once, a no tells the model the reason', async () => {
    const pane = Pane.start('support', chat('support.yaml', 'desk-1'));
    await pane.waitFor(PROMPT);
    pane.type('Open an urgent ticket: the printer is on fire');
    let screen = await pane.waitFor(/Approve\? \[y\/n\]/);
    expect(screen).toContain('‖ the run waits for a decision');
    expect(screen).toMatch(
      /\? create_ticket \{"title":"[^"]+","priority":"urgent"\} needs approval\. Approve\? \[y\/n\]/,
    );
    pane.type('y');
    screen = await pane.waitFor(PROMPT, 2);
    expect(screen).toMatch(/✓ create_ticket/);
    expect(screen).toMatch(/^agent › .*T-[0-9a-f]{8}/m);

    pane.type('Open an urgent ticket: the coffee machine is empty');
    await pane.waitFor(/Approve\? \[y\/n\]/, 2);
    pane.type('n');
    await pane.waitFor(/reason \(optional, told to the model\):/);
    pane.type('coffee can wait');
    screen = await pane.waitFor(PROMPT, 3);
    expect(screen).toMatch(/^agent › .*coffee can wait/m);
    pane.press('C-c');
    expect(await pane.exitStatus()).toBe(0);

    const tickets = readFileSync(join(directory, '.keel', 'outbox.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(tickets).toHaveLength(1);
    const turns = await turnsOf('desk-1');
    expect(turns).toHaveLength(2);
    const rejection = turns[1]!.messages.find((message) => message.role === 'tool');
    expect(rejection?.content).toMatch(/tool\.rejected.*coffee can wait/);
  }, 60_000);

  it('keeps the turn when the answer’s stream breaks after the approved ticket (examples/support.yaml, seed 1)', async () => {
    // The example as shipped: its faults (seed 1) cut the answer's stream after "Here is what I", past the approved
    // side effect; the run recovers the stream, so the ticket exists once and the session holds the turn.
    const example = join(directory, 'support-example');
    mkdirSync(example);
    copyFileSync(
      fileURLToPath(new URL('../../../../../examples/support.yaml', import.meta.url)),
      join(example, 'support.yaml'),
    );
    const pane = Pane.start(
      'example',
      `sh -c "cd support-example && ${chat('support.yaml', 'desk-example')}"`,
    );
    await pane.waitFor(PROMPT);
    pane.type('Open an urgent ticket: server down');
    await pane.waitFor(/Approve\? \[y\/n\]/);
    pane.type('y');
    const screen = await pane.waitFor(PROMPT, 2, 30_000);
    expect(screen).toMatch(/✓ create_ticket/);
    expect(screen).toMatch(
      /↺ stream recovered on simulated\/sim-primary after provider\.invalid_response: the answer goes on after the \d+ characters shown/,
    );
    expect(screen).not.toContain('✗ failed');
    // The answer is shown once: its first part, then the rest after the recovery line.
    expect(screen.match(/T-[0-9a-f]{8}/g)).toHaveLength(1);
    pane.press('C-c');
    expect(await pane.exitStatus()).toBe(0);

    const tickets = readFileSync(join(example, '.keel', 'outbox.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(tickets).toHaveLength(1);
    const shown = await runKeel(example, 'sessions', 'show', 'desk-example', '--json');
    const turns = JSON.parse(shown.stdout).turns;
    expect(turns).toHaveLength(1);
    expect(turns[0].messages.map((message: { role: string }) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(turns[0].messages[3].content).toMatch(/^Here is what I found: .*T-[0-9a-f]{8}/);
  }, 60_000);

  it('cancels the answer being written on Ctrl-C, keeps the completed turns, and leaves on Ctrl-C at the prompt', async () => {
    const pane = Pane.start('slow', chat('slow.yaml', 'slow-1'));
    await pane.waitFor(PROMPT);
    pane.type('Weather in Paris?');
    await pane.waitFor(PROMPT, 2);
    pane.type('Weather in Oslo?');
    // Its tool ran; the answer that would follow never comes.
    await pane.waitFor(/✓ get_weather/, 2);
    pane.press('C-c');
    const screen = await pane.waitFor(PROMPT, 3);
    expect(screen).toContain('■ cancelled: the session keeps the turns that completed before this one');
    pane.press('C-c');
    expect(await pane.exitStatus()).toBe(0);

    const turns = await turnsOf('slow-1');
    expect(turns.map((turn) => turn.messages[0]!.content)).toEqual(['Weather in Paris?']);
    const session = JSON.parse((await keel('sessions', 'list', '--json')).stdout).find(
      (entry: { sessionId: string }) => entry.sessionId === 'slow-1',
    );
    expect(session).toMatchObject({ version: 1, messageCount: 4 });
    expect(session).not.toHaveProperty('activeRunId');
    const cancelled = JSON.parse((await keel('runs', 'list', '--status', 'cancelled', '--json')).stdout);
    expect(cancelled).toHaveLength(1);

    // Back in the session: the next question goes on from the kept turn.
    const again = Pane.start('slow-again', chat('slow.yaml', 'slow-1'));
    expect(await again.waitFor(PROMPT)).toContain('resuming session slow-1: 1 turn so far; the last one:');
    again.type('Weather in Rome?');
    await again.waitFor(PROMPT, 3);
    again.press('C-d');
    expect(await again.exitStatus()).toBe(0);
    expect((await turnsOf('slow-1')).map((turn) => turn.messages[0]!.content)).toEqual([
      'Weather in Paris?',
      'Weather in Rome?',
    ]);
  }, 60_000);

  it('shows that it waits for a model that sends nothing, and for how long, on one line that ticks', async () => {
    const pane = Pane.start('stuck', chat('stuck.yaml', 'stuck-1'));
    await pane.waitFor(PROMPT);
    pane.type('Hello?');
    await pane.waitFor(/^ {2}⧗ waiting for simulated\/sim-primary: [1-9]\d* s$/m);
    // The same line counts on: a later second shows, and only one wait line is on the screen.
    const screen = await pane.waitFor(
      /^ {2}⧗ waiting for simulated\/sim-primary: ([3-9]|\d{2,}) s$/m,
      1,
      20_000,
    );
    expect(screen.match(/⧗ waiting for/g)).toHaveLength(1);
    pane.press('C-c');
    const after = await pane.waitFor(/■ cancelled/);
    expect(after).not.toContain('⧗ waiting for');
    pane.press('C-c');
    expect(await pane.exitStatus()).toBe(0);
  }, 60_000);
});
