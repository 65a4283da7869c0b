import { randomBytes } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { KeelError, type RunStore } from '@keel/core';
import { optionError, rejectUnknownOptions, requireOptionsObject } from '@keel/core/adapter';
import type { ResumeRun } from './resume.js';

/** The host the dashboard binds when none is given: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';
/** The port the dashboard listens on when none is given. */
export const DEFAULT_PORT = 4800;
/** The shortest token accepted: shorter ones are too easy to guess. */
export const MIN_TOKEN_LENGTH = 16;

/** Options of {@link startDashboard}. */
export interface DashboardOptions {
  /** The run store to show: the dashboard reads it, and writes to it only by resuming runs. Required. */
  store: RunStore;
  /** The interface to bind. Defaults to `127.0.0.1`; any host that is not loopback requires `token`. */
  host?: string;
  /** The TCP port. Defaults to 4800; 0 picks a free port (read it from `Dashboard.url`). */
  port?: number;
  /**
   * The secret every API request must carry (`Authorization: Bearer <token>`), at least 16 characters. Defaults to a
   * random one, which is allowed only on a loopback host: read it from `Dashboard.token`.
   */
  token?: string;
  /**
   * Resumes a run with a human's answers (see {@link ResumeRun}). Defaults to none: the page shows pending decisions
   * but cannot answer them, and says why.
   */
  resume?: ResumeRun;
  /** Why `resume` is missing, shown beside pending decisions. Defaults to a generic sentence. */
  resumeUnavailableReason?: string;
  /** How often the store is polled for changes while a page is open, in ms. Defaults to 1000. */
  pollIntervalMs?: number;
  /** How many of the newest runs the list loads (filters and search apply to these). Defaults to 200. */
  listLimit?: number;
  /** The current time in ms since the epoch (the age of running runs). Defaults to `Date.now`. */
  now?: () => number;
  /**
   * Rewrites the text of every API response (JSON bodies, errors and the live event stream) before it is sent, so
   * that the page shows no secret the command line would not print: `keel dashboard` passes the same replacement of
   * `*_API_KEY` / `*_API_TOKEN` values as its own output. Defaults to none: runs are served as the store holds them.
   */
  redact?: (text: string) => string;
}

/** Options after validation, with their defaults. */
export interface ResolvedDashboardOptions {
  store: RunStore;
  host: string;
  port: number;
  token: string;
  tokenGenerated: boolean;
  loopback: boolean;
  resume: ResumeRun | undefined;
  resumeUnavailableReason: string;
  pollIntervalMs: number;
  listLimit: number;
  now: () => number;
  redact: ((text: string) => string) | undefined;
}

const OPTIONS = [
  'store',
  'host',
  'port',
  'token',
  'resume',
  'resumeUnavailableReason',
  'pollIntervalMs',
  'listLimit',
  'now',
  'redact',
];

/** Whether `host` names the loopback interface (`localhost`, `127.x.x.x`, `::1`). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1') return true;
  return isIPv4(bare) && bare.startsWith('127.');
}

/** Validates the dashboard's options, fills in defaults and makes a token when none was given on loopback. */
export function resolveDashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  requireOptionsObject(options, { where: 'startDashboard', example: '{ store }' });
  rejectUnknownOptions(options, OPTIONS, { where: 'startDashboard' });
  const store = options.store as unknown;
  if (
    typeof store !== 'object' ||
    store === null ||
    typeof (store as RunStore).listRuns !== 'function' ||
    typeof (store as RunStore).loadRun !== 'function'
  ) {
    throw optionError({
      where: 'startDashboard',
      option: 'store',
      message: 'store must be a RunStore (such as new SqliteRunStore(path))',
    });
  }
  const host = options.host ?? DEFAULT_HOST;
  if (typeof host !== 'string' || host.trim() === '' || /[\s/]/.test(host)) {
    throw optionError({
      where: 'startDashboard',
      option: 'host',
      message: `host must be a host name or IP address, got ${JSON.stringify(host)}`,
    });
  }
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw optionError({
      where: 'startDashboard',
      option: 'port',
      message: `port must be an integer from 0 to 65535, got ${String(port)}`,
    });
  }
  const loopback = isLoopbackHost(host);
  if (options.token !== undefined) {
    if (typeof options.token !== 'string' || options.token.length < MIN_TOKEN_LENGTH) {
      throw optionError({
        where: 'startDashboard',
        option: 'token',
        message: `token must be a string of at least ${MIN_TOKEN_LENGTH} characters`,
      });
    }
    if (!/^[A-Za-z0-9._~+/-]+=*$/.test(options.token)) {
      throw optionError({
        where: 'startDashboard',
        option: 'token',
        message: 'token may hold only letters, digits and . _ ~ + / - (it travels as a bearer token)',
      });
    }
  } else if (!loopback) {
    throw new KeelError(
      'config.invalid',
      `Refusing to bind ${host} without a token: anyone who can reach it could read runs and approve tool calls`,
      {
        data: { option: 'token', host },
        guidance:
          'Pass a token of at least 16 characters (keel dashboard --token T, or KEEL_DASHBOARD_TOKEN), or bind 127.0.0.1.',
      },
    );
  }
  if (options.resume !== undefined && typeof options.resume !== 'function') {
    throw optionError({
      where: 'startDashboard',
      option: 'resume',
      message: 'resume must be a function (request) => Promise<{ finished }>',
    });
  }
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 10) {
    throw optionError({
      where: 'startDashboard',
      option: 'pollIntervalMs',
      message: `pollIntervalMs must be an integer >= 10, got ${String(pollIntervalMs)}`,
    });
  }
  const listLimit = options.listLimit ?? 200;
  if (!Number.isInteger(listLimit) || listLimit < 1 || listLimit > 10_000) {
    throw optionError({
      where: 'startDashboard',
      option: 'listLimit',
      message: `listLimit must be an integer from 1 to 10000, got ${String(listLimit)}`,
    });
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw optionError({
      where: 'startDashboard',
      option: 'now',
      message: 'now must be a function returning ms since the epoch',
    });
  }
  if (options.redact !== undefined && typeof options.redact !== 'function') {
    throw optionError({
      where: 'startDashboard',
      option: 'redact',
      message: 'redact must be a function (text) => text',
    });
  }
  return {
    store: options.store,
    host,
    port,
    token: options.token ?? randomBytes(24).toString('base64url'),
    tokenGenerated: options.token === undefined,
    loopback,
    resume: options.resume,
    resumeUnavailableReason:
      options.resumeUnavailableReason ?? 'This dashboard was started without a way to resume runs.',
    pollIntervalMs,
    listLimit,
    now: options.now ?? Date.now,
    redact: options.redact,
  };
}
