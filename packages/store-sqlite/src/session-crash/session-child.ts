// The child process of the session crash test (session-crash.test.ts): runs one message of a conversation on a
// session of a SQLite store, as a process of its own, and reports on stdout (one JSON object a line) so that the
// test can SIGKILL it in the middle of the run. A test fixture compiled with the package, not part of its API.
//
//   node session-child.js <database> <sessionId> <runId> <message> [hang-city]
//
// With `hang-city`, the lookup of that city never returns (the test kills the process there).
import { FakeClock, SESSION_START_MS, SessionFixture } from '@keel/core/testing';
import { SqliteRunStore } from '../sqlite-run-store.js';

const [databasePath, sessionId, runId, message, hangCity] = process.argv.slice(2);
if (databasePath === undefined || sessionId === undefined || runId === undefined || message === undefined) {
  process.stderr.write('usage: session-child.js <database> <sessionId> <runId> <message> [hang-city]\n');
  process.exit(2);
}
const store = new SqliteRunStore(databasePath);
const fixture = new SessionFixture();
if (hangCity !== undefined) {
  void fixture.gate(hangCity).entered.then(() => {
    process.stdout.write(`${JSON.stringify({ type: 'tool-started', city: hangCity })}\n`);
  });
}
// The fixture's clock: the test's later process takes the lease over by moving its own clock past it.
const assistant = fixture.agent(store, {
  owner: `child-${process.pid}`,
  clock: new FakeClock(SESSION_START_MS),
});
const result = await assistant.run(message, { sessionId, runId });
process.stdout.write(
  `${JSON.stringify({ type: 'result', status: result.status, output: result.output ?? null, session: result.session ?? null })}\n`,
);
await store.close();
