import type { Tool } from '@keel/core';
import { context as contextApi } from '@opentelemetry/api';
import type { KeelTracing } from './tracing.js';

/**
 * The tools, each running its `execute` inside its call's `execute_tool` span context, so that what it does is traced
 * under that span: an instrumented HTTP client sends `traceparent`, `propagation.inject(context.active(), headers)`
 * fills headers by hand, child spans nest. Everything else about each tool is kept. Needs a context manager (the
 * SDK's `AsyncLocalStorageContextManager`) for the context to reach across `await`.
 *
 * @example
 *   const tracing = keelTracing();
 *   const assistant = agent({ model, tools: tracedTools(tracing, [weather, search]) });
 *   tracing.observe(assistant);
 */
export function tracedTools<T extends Tool>(tracing: KeelTracing, tools: readonly T[]): T[] {
  return tools.map((tool) => tracedTool(tracing, tool));
}

/** One tool, as {@link tracedTools} wraps it. */
export function tracedTool<T extends Tool>(tracing: KeelTracing, tool: T): T {
  const approval = tool.needsApproval;
  const wrapped: Tool = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    validate: (value) => tool.validate(value),
    idempotent: tool.idempotent,
    timeoutMs: tool.timeoutMs,
    needsApproval: typeof approval === 'function' ? (input) => approval.call(tool, input) : approval,
    execute: (input, toolContext) => {
      const callContext = tracing.contextOf(toolContext);
      return callContext === undefined
        ? tool.execute(input, toolContext)
        : contextApi.with(callContext, () => tool.execute(input, toolContext));
    },
  };
  return Object.freeze(wrapped) as T;
}
