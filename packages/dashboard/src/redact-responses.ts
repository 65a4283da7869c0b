import type { MiddlewareHandler } from 'hono';

/**
 * Passes the text of every JSON response through `redact` (the `redact` option), after the route and the error
 * handler have made it: a run's state, events, report and errors, whatever they hold, leave the dashboard as the
 * command line would print them. The event stream redacts its own messages (it is not a body read here). Does
 * nothing when `redact` is undefined.
 */
export function redactResponses(redact: ((text: string) => string) | undefined): MiddlewareHandler {
  return async (context, next) => {
    await next();
    if (redact === undefined) return;
    const type = context.res.headers.get('content-type') ?? '';
    if (!/\bjson\b/i.test(type)) return;
    const text = redact(await context.res.text());
    const headers = new Headers(context.res.headers);
    headers.delete('content-length');
    const status = context.res.status;
    // Cleared first: Hono copies the old response's headers (a stale content-length among them) into a new one.
    context.res = undefined;
    context.res = new Response(text, { status, headers });
  };
}
