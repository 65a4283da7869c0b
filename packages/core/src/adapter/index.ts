// `@keel/core/adapter`: what a package that adapts keel to something else needs (a model provider, a tool source, a
// telemetry sink, a shared store): the agent's failure rules (which failures move a run to the next model, which count
// against a breaker), policy plumbing (signals and contexts, an event emitter), option checks and redaction. Explicit
// exports only; `surface/adapter.txt` lists them.

export {
  countsAgainstModel,
  FALLBACK_CODES,
  presentableError,
  underlyingError,
} from '../agent/run/failure-rules.js';
export {
  base64Bytes,
  type ContentLimits,
  checkContentSizes,
  contentPartsProblem,
  dataUrl,
  isTextFile,
} from '../content/content-parts.js';
export { isControlSignal } from '../errors/control.js';
export { isSecretKey, REDACTED } from '../errors/redact.js';
export { createRedactor, type Redactor } from '../errors/redactor.js';
export { type SecretValueRedactor, secretValueRedactor } from '../errors/secret-values.js';
export { deserializeError } from '../errors/serialize.js';
// Cost: the built-in price table and how usage is priced (telemetry, dashboards, the CLI).
export type { BudgetScope } from '../governance/budget-options.js';
export { costOfUsage } from '../governance/cost.js';
export { DEFAULT_PRICES, PRICES_AS_OF, priceOf } from '../governance/prices.js';
export type { RunCost } from '../governance/run-cost.js';
// The option kit: checks with object arguments whose refusals carry `{ where, option, path }`.
export {
  type ClockShape,
  type FunctionCheck,
  type IntegerCheck,
  MAX_TIMER_MS,
  type NumberCheck,
  type OptionCheck,
  requireBoolean,
  requireClock,
  requireFunction,
  requireInteger,
  requireMilliseconds,
  requireNumber,
  requireOneOf,
  requireString,
  requireStringArray,
  type StringArrayCheck,
  type StringCheck,
} from '../options/checks.js';
export { closestName } from '../options/closest-name.js';
export {
  type KnownOptions,
  type OptionsObjectCheck,
  rejectUnknownOptions,
  requireOptionsObject,
} from '../options/known-options.js';
export {
  describeValue,
  type OptionErrorData,
  type OptionErrorInput,
  type OptionPath,
  optionError,
  optionErrorData,
  optionPathOf,
  optionPathText,
  throwOptionError,
} from '../options/option-error.js';
export { isDependencyFailure } from '../policies/breaker/failures.js';
export type { TimerHandle } from '../policies/clock.js';
export {
  CALL_SETTLED_REASON,
  isAborted,
  NEVER_ABORTED_SIGNAL,
  toContext,
  withAttempt,
} from '../policies/context.js';
export { Emitter } from '../policies/events.js';
export type { Event, PolicyContext } from '../policies/policy.js';
// The stall watch every streamed model call shares: the SSE readers of the HTTP providers, and bridges.
export {
  DEFAULT_STREAM_FIRST_BYTE_TIMEOUT_MS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  type StreamStallOptions,
  type StreamStallWatch,
  watchModelStream,
  watchStreamStall,
} from '../policies/stream-stall.js';
export { parseJson } from '../schemas/parse-json.js';
export { resolveSchema } from '../schemas/schema.js';
export type {
  JsonSchema,
  ModelStreamPart,
  ProviderMetadata,
  ReasoningPart,
  ToolChoice,
  ToolDefinition,
} from '../spec/model.js';
export { TOOL_NAME_PATTERN } from '../spec/tool.js';
