import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { secureHeaders } from 'hono/secure-headers';
import { isLoopbackHost } from './options.js';

/**
 * Headers on every response: a Content-Security-Policy allowing only the dashboard's own scripts, styles and
 * requests (no inline script, no other origin, no framing), and the usual hardening headers.
 */
export function securityHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
    },
    referrerPolicy: 'no-referrer',
    xFrameOptions: 'DENY',
  });
}

/** Every API request carries `Authorization: Bearer <token>` (compared in constant time). */
export function requireToken(token: string): MiddlewareHandler {
  return bearerAuth({
    token,
    noAuthenticationHeader: { message: { error: errorBody('Missing Authorization: Bearer <token>') } },
    invalidToken: { message: { error: errorBody('Wrong token') } },
    invalidAuthenticationHeader: { message: { error: errorBody('Malformed Authorization header') } },
  });
}

function errorBody(message: string) {
  return {
    code: 'unauthorized',
    message,
    guidance: 'Open the URL keel dashboard printed at start (it carries the token after #token=).',
  };
}

/**
 * A loopback dashboard answers only requests addressed to a loopback name (`Host: 127.0.0.1:port`, `localhost`,
 * `[::1]`): a page on another site whose DNS name was rebound to 127.0.0.1 sends its own name and is refused.
 */
export function loopbackHostOnly(loopback: boolean): MiddlewareHandler {
  return async (context, next) => {
    if (loopback) {
      const host = hostName(context.req.header('host') ?? '');
      if (host === undefined || !isLoopbackHost(host)) {
        return context.json(
          { error: { code: 'forbidden', message: 'This dashboard answers only to a loopback host name' } },
          403,
        );
      }
    }
    await next();
  };
}

/**
 * Refuses state-changing requests that a browser marks as coming from another site: `Sec-Fetch-Site` must be
 * `same-origin` when sent, and `Origin` must match the `Host` the request was sent to when sent. Requests with
 * neither (command-line clients) pass: they still need the token. JSON bodies only, which a cross-site form cannot
 * send without a preflight.
 */
export function sameOriginWrites(): MiddlewareHandler {
  return async (context, next) => {
    if (/^(GET|HEAD|OPTIONS)$/.test(context.req.method)) return next();
    const site = context.req.header('sec-fetch-site');
    const origin = context.req.header('origin');
    const host = context.req.header('host');
    const crossSite = site !== undefined && site !== 'same-origin';
    const foreignOrigin = origin !== undefined && (host === undefined || !sameHost(origin, host));
    if (crossSite || foreignOrigin) {
      return context.json(
        { error: { code: 'forbidden', message: 'Cross-origin requests may not change anything here' } },
        403,
      );
    }
    if (!(context.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) {
      return context.json(
        { error: { code: 'config.invalid', message: 'Send the body as application/json' } },
        415,
      );
    }
    return next();
  };
}

function sameHost(origin: string, host: string): boolean {
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** The name part of a Host header (`[::1]:80` → `[::1]`), or undefined when it is malformed. */
function hostName(header: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(:\d+)?$/i.exec(header.trim());
  return match?.[1];
}
