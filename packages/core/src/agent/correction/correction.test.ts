import { describe, expect, it } from 'vitest';
import { KeelError } from '../../errors/keel-error.js';
import { closestName, editDistance } from '../../options/closest-name.js';
import {
  malformedArgumentsError,
  mismatchedArgumentsError,
  parseToolArguments,
  unknownToolError,
} from './correction.js';
import { CorrectionTracker } from './correction-tracker.js';

describe('unknownToolError', () => {
  it('names the available tools and suggests the closest one', () => {
    const error = unknownToolError('get_wether', ['get_weather', 'search_docs']);
    expect(error.code).toBe('tool.not_found');
    expect(error.guidance).toBe(
      'There is no tool named "get_wether". Did you mean "get_weather"? Available tools: get_weather, search_docs. Call one of them by its exact name.',
    );
    expect(error.data).toEqual({
      tool: 'get_wether',
      available: ['get_weather', 'search_docs'],
      suggestion: 'get_weather',
    });
  });

  it('suggests nothing when no name is close', () => {
    const error = unknownToolError('send_email', ['get_weather', 'search_docs']);
    expect(error.guidance).not.toContain('Did you mean');
    expect(error.data.suggestion).toBeUndefined();
  });

  it('says to answer without tools when there are none', () => {
    expect(unknownToolError('x', []).guidance).toContain(
      'Available tools: none. Answer without calling a tool.',
    );
  });
});

describe('closestName and editDistance', () => {
  it.each([
    ['get_wether', ['get_weather', 'get_time'], 'get_weather'],
    ['GetWeather', ['get_weather'], 'get_weather'],
    ['Get_Weather', ['get_weather'], 'get_weather'],
    ['get-weather', ['get_weather'], 'get_weather'],
    ['search', ['search_docs', 'sear'], 'sear'],
    ['delete_everything', ['get_weather'], undefined],
    ['x', [], undefined],
  ])('closest to %s in %j is %s', (name, candidates, expected) => {
    expect(closestName(name, candidates)).toBe(expected);
  });

  it('computes Levenshtein distance', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });
});

describe('mismatchedArgumentsError', () => {
  it('lists the issues and the schema', () => {
    const inputSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const error = mismatchedArgumentsError({ name: 'get_weather', inputSchema }, [
      { path: '$.city', message: 'required property is missing' },
      { path: '$.days', message: 'expected integer, received string' },
    ]);
    expect(error.code).toBe('tool.invalid_input');
    expect(error.message).toBe(
      'Invalid arguments for tool "get_weather": $.city required property is missing (and 1 more)',
    );
    expect(error.guidance).toBe(
      'The arguments for "get_weather" do not match its input schema:\n' +
        '- $.city: required property is missing\n' +
        '- $.days: expected integer, received string\n' +
        'Call "get_weather" again with arguments that match this JSON Schema:\n' +
        JSON.stringify(inputSchema),
    );
    expect(error.data.issues).toHaveLength(2);
  });

  it('caps the issue list and a huge schema', () => {
    const issues = Array.from({ length: 15 }, (_, index) => ({ path: `$.f${index}`, message: 'bad' }));
    const inputSchema = { type: 'object', description: 'd'.repeat(10_000) };
    const error = mismatchedArgumentsError({ name: 't', inputSchema }, issues);
    expect(error.guidance).toContain('- ... and 5 more');
    expect(error.guidance).toContain('[schema cut at 4000 characters]');
    expect(error.guidance!.length).toBeLessThan(5_000);
  });
});

describe('parseToolArguments and malformedArgumentsError', () => {
  it('parses arguments, and treats blank text as no arguments', () => {
    expect(parseToolArguments('t', '{"city":"Paris"}')).toEqual({ success: true, value: { city: 'Paris' } });
    expect(parseToolArguments('t', '  ')).toEqual({ success: true, value: {} });
  });

  it('explains malformed JSON with position and surrounding text', () => {
    const parsed = parseToolArguments('get_weather', '{"city": "Paris", "days": 3,}');
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(parsed.error.code).toBe('tool.invalid_input');
    expect(parsed.error.data).toMatchObject({ tool: 'get_weather', position: 27, line: 1, column: 28 });
    expect(parsed.error.guidance).toContain('Trailing comma before } at position 27 (line 1, column 28)');
    expect(parsed.error.guidance).toContain('Near: "{\\"city\\": \\"Paris\\", \\"days\\": 3<<HERE>>,}"');
  });

  it('keeps the snippet short for long arguments', () => {
    const text = `{"a": "${'x'.repeat(500)}", }`;
    const error = malformedArgumentsError('t', text, { message: 'm', position: 300, line: 1, column: 301 });
    expect(error.guidance).toMatch(/Near: "\.\.\.x{40}<<HERE>>x{40}\.\.\."/);
  });
});

describe('CorrectionTracker', () => {
  const invalid = (message = 'bad') => new KeelError('tool.invalid_input', message);

  it('allows 3 attempts in a row at one tool by default, then stops with run.no_progress', () => {
    const tracker = new CorrectionTracker();
    expect(tracker.recordFailure({ target: 'get_weather', text: '{"a":1}', error: invalid() })).toEqual({
      action: 'correct',
      attemptForCall: 1,
      invalidInRun: 1,
    });
    expect(tracker.recordFailure({ target: 'get_weather', text: '{"a":2}', error: invalid() })).toMatchObject(
      {
        action: 'correct',
        attemptForCall: 2,
      },
    );
    const decision = tracker.recordFailure({ target: 'get_weather', text: '{"a":3}', error: invalid() });
    expect(decision.action).toBe('stop');
    if (decision.action !== 'stop') return;
    expect(decision.reason).toBe('per_call_limit');
    expect(decision.error.code).toBe('run.no_progress');
    expect(decision.error.data).toMatchObject({
      reason: 'per_call_limit',
      target: 'get_weather',
      attemptsInARow: 3,
    });
    expect((decision.error.cause as KeelError).code).toBe('tool.invalid_input');
  });

  it('starts the count again after a valid call of the same tool', () => {
    const tracker = new CorrectionTracker({ maxAttemptsPerCall: 2 });
    expect(tracker.recordFailure({ target: 't', text: '1', error: invalid() }).action).toBe('correct');
    tracker.recordSuccess('t');
    expect(tracker.recordFailure({ target: 't', text: '2', error: invalid() }).action).toBe('correct');
    expect(tracker.recordFailure({ target: 't', text: '3', error: invalid() }).action).toBe('stop');
  });

  it('stops on a repeated identical invalid call, even within the limits', () => {
    const tracker = new CorrectionTracker({ maxAttemptsPerCall: 10 });
    expect(tracker.recordFailure({ target: 't', text: '{"x":1}', error: invalid('same') }).action).toBe(
      'correct',
    );
    expect(tracker.recordFailure({ target: 't', text: '{"x":1}', error: invalid('other') }).action).toBe(
      'correct',
    );
    const decision = tracker.recordFailure({ target: 't', text: '{"x":1}', error: invalid('same') });
    expect(decision).toMatchObject({ action: 'stop', reason: 'repeated_invalid_call' });
    if (decision.action === 'stop')
      expect(decision.error.message).toContain('repeated the same invalid tool call "t"');
  });

  it('does not take an invalid call for a repeat when a valid call came between', () => {
    const tracker = new CorrectionTracker();
    const broken = { target: 'get_weather', text: '{"city": Par', error: invalid('not JSON') };
    expect(tracker.recordFailure(broken).action).toBe('correct');
    tracker.recordSuccess('get_weather');
    expect(tracker.recordFailure(broken).action).toBe('correct');
    tracker.recordSuccess('calculator');
    expect(tracker.recordFailure(broken).action).toBe('correct');
    expect(tracker.recordFailure(broken)).toMatchObject({ action: 'stop', reason: 'repeated_invalid_call' });
  });

  it('bounds invalid attempts per run (10 by default) across tools', () => {
    const tracker = new CorrectionTracker();
    for (let index = 0; index < 9; index++) {
      expect(tracker.recordFailure({ target: `tool${index}`, text: '', error: invalid() }).action).toBe(
        'correct',
      );
    }
    expect(tracker.recordFailure({ target: 'tool9', text: '', error: invalid() })).toMatchObject({
      action: 'stop',
      reason: 'per_run_limit',
    });
    expect(tracker.invalidCount).toBe(10);
  });

  it('keeps tool calls and outputs apart', () => {
    const tracker = new CorrectionTracker({ maxAttemptsPerCall: 2 });
    const error = new KeelError('output.invalid', 'not JSON');
    expect(tracker.recordFailure({ kind: 'output', target: 'output', text: 'a', error }).action).toBe(
      'correct',
    );
    expect(tracker.recordFailure({ target: 'output', text: 'a', error }).action).toBe('correct');
    const decision = tracker.recordFailure({ kind: 'output', target: 'output', text: 'b', error });
    expect(decision).toMatchObject({ action: 'stop', reason: 'per_call_limit' });
    if (decision.action === 'stop') expect(decision.error.message).toContain('at the final output');
  });

  it('survives a checkpoint: state round-trips through JSON', () => {
    const tracker = new CorrectionTracker();
    tracker.recordFailure({ target: 't', text: '{"x":1}', error: invalid() });
    const restored = new CorrectionTracker({}, JSON.parse(JSON.stringify(tracker.toJSON())));
    expect(restored.invalidCount).toBe(1);
    expect(restored.recordFailure({ target: 't', text: '{"x":1}', error: invalid() })).toMatchObject({
      action: 'stop',
      reason: 'repeated_invalid_call',
    });
  });

  it.each([{ maxAttemptsPerCall: 0 }, { maxInvalidPerRun: 1.5 }])('rejects limits %j', (limits) => {
    expect(() => new CorrectionTracker(limits)).toThrow(/must be a positive integer/);
  });
});
