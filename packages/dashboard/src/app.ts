import { type ErrorCode, KeelError, type RunStatus, sessionCost } from '@keel/core';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { streamSSE } from 'hono/streaming';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Asset } from './assets.js';
import type { ChangeFeed } from './change-feed.js';
import type { ResolvedDashboardOptions } from './options.js';
import { redactResponses } from './redact-responses.js';
import { parseAnswers } from './resume.js';
import type { ResumeTracker } from './resume-tracker.js';
import { RUN_STATUSES, type RunCatalog, type RunFilter } from './run-catalog.js';
import { readState, runView } from './run-view.js';
import { loopbackHostOnly, requireToken, sameOriginWrites, securityHeaders } from './security.js';

/** What the routes work with. */
export interface AppParts {
  options: ResolvedDashboardOptions;
  assets: Map<string, Asset>;
  catalog: RunCatalog;
  feed: ChangeFeed;
  resumes: ResumeTracker;
  /** Open event streams, aborted when the dashboard closes. */
  streams: Set<{ abort(): void }>;
}

const MAX_BODY_BYTES = 64 * 1024;
const HEARTBEAT_MS = 15_000;

/** The dashboard's routes: the page and its files, and the JSON API (token required) with its event stream. */
export function createApp(parts: AppParts): Hono {
  const { options, assets, catalog, feed, resumes, streams } = parts;
  const redact = options.redact ?? ((text: string) => text);
  const app = new Hono();
  app.use('*', securityHeaders());
  app.use('*', loopbackHostOnly(options.loopback));
  app.use('/api/*', redactResponses(options.redact));
  app.use('/api/*', requireToken(options.token));
  app.use('/api/*', sameOriginWrites());

  const page = (name: string, status: ContentfulStatusCode = 200) => {
    const asset = assets.get(name)!;
    return new Response(asset.body, {
      status,
      headers: { 'content-type': asset.contentType, 'cache-control': 'no-cache' },
    });
  };
  app.get('/', () => page('index.html'));
  app.get('/runs/:runId', () => page('index.html'));
  // Browsers ask for an icon on their own; there is none, and saying so quietly keeps the console clean.
  app.get('/favicon.ico', (context) => context.body(null, 204));
  app.get('/assets/:name', (context) => {
    const name = context.req.param('name');
    return assets.has(name)
      ? page(name)
      : context.json({ error: { code: 'not_found', message: 'No such file' } }, 404);
  });

  app.get('/api/runs', async (context) => {
    const filter: RunFilter = {};
    const status = context.req.query('status');
    if (status !== undefined && status !== '') {
      if (!RUN_STATUSES.includes(status as RunStatus)) {
        throw new KeelError(
          'config.invalid',
          `status must be one of ${RUN_STATUSES.join(', ')}, not ${status}`,
        );
      }
      filter.status = status as RunStatus;
    }
    const agentName = context.req.query('agent');
    if (agentName !== undefined && agentName !== '') filter.agentName = agentName;
    const query = context.req.query('q');
    if (query !== undefined && query !== '') filter.query = query;
    return context.json(await catalog.list(filter));
  });

  app.get('/api/runs/:runId', async (context) => {
    const runId = context.req.param('runId');
    const record = await options.store.loadRun(runId);
    if (record === undefined) throw notFound(runId);
    const view = runView(record, await options.store.ledger(runId), options.now());
    const sessionId = 'report' in view ? sessionIdOf(record.state) : undefined;
    const session = sessionId === undefined ? undefined : await options.store.loadSession(sessionId);
    if (session !== undefined && 'report' in view) {
      const cost = await sessionCost(options.store, session);
      view.session = {
        sessionId: session.sessionId,
        totalUsd: cost.totalUsd,
        byModel: { ...cost.byModel },
        runs: cost.runs.length,
      };
    }
    return context.json({
      ...view,
      resume: {
        available: options.resume !== undefined,
        ...(options.resume === undefined ? { unavailableReason: options.resumeUnavailableReason } : {}),
        ...resumes.status(runId),
      },
    });
  });

  app.post('/api/runs/:runId/decisions', bodyLimit({ maxSize: MAX_BODY_BYTES }), async (context) => {
    const runId = context.req.param('runId');
    const body: unknown = await context.req.json().catch(() => {
      throw new KeelError('config.invalid', 'The body is not valid JSON');
    });
    const record = await options.store.loadRun(runId);
    if (record === undefined) throw notFound(runId);
    if (record.status !== 'interrupted') {
      throw new KeelError('store.conflict', `Run ${runId} is ${record.status}: it waits for no decision`, {
        data: { runId, status: record.status },
      });
    }
    const state = readState(record);
    if (KeelError.isInstance(state)) throw state;
    const answers = parseAnswers(body, state.pendingDecisions);
    const resume = options.resume;
    if (resume === undefined) {
      throw new KeelError('config.invalid', options.resumeUnavailableReason, {
        guidance:
          'Resume it with keel resume, or start keel dashboard where the run was started (or with --agent).',
      });
    }
    await resumes.start(runId, () => resume({ runId, agentName: record.agentName, ...answers }));
    return context.json({ runId, resuming: true }, 202);
  });

  app.get('/api/live', (context) =>
    streamSSE(context, async (stream) => {
      streams.add(stream);
      let closed = false;
      const unsubscribe = feed.subscribe((change) => {
        if (!closed) void stream.writeSSE({ event: change.kind, data: redact(JSON.stringify(change)) });
      });
      const heartbeat = setInterval(() => void stream.writeSSE({ event: 'ping', data: '' }), HEARTBEAT_MS);
      heartbeat.unref();
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      closed = true;
      clearInterval(heartbeat);
      unsubscribe();
      streams.delete(stream);
    }),
  );

  app.notFound((context) => context.json({ error: { code: 'not_found', message: 'No such page' } }, 404));
  app.onError((error, context) => {
    if (error instanceof HTTPException) return error.getResponse();
    const keelError = KeelError.isInstance(error)
      ? error
      : new KeelError('internal.unexpected', error instanceof Error ? error.message : String(error));
    const body = {
      error: {
        code: keelError.code,
        message: keelError.message,
        ...(keelError.guidance === undefined ? {} : { guidance: keelError.guidance }),
      },
    };
    return context.json(body, statusOf(keelError.code));
  });
  return app;
}

/** The session a stored state is on, if any. */
function sessionIdOf(state: unknown): string | undefined {
  const sessionId = (state as { session?: { sessionId?: unknown } } | null)?.session?.sessionId;
  return typeof sessionId === 'string' ? sessionId : undefined;
}

function notFound(runId: string): KeelError {
  return new KeelError('store.not_found', `No run ${runId} in this store`, { data: { runId } });
}

function statusOf(code: ErrorCode): ContentfulStatusCode {
  switch (code) {
    case 'config.invalid':
      return 400;
    case 'store.not_found':
      return 404;
    case 'store.conflict':
      return 409;
    case 'store.unavailable':
      return 503;
    default:
      return 500;
  }
}
