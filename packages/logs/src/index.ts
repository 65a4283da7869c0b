// @keel/logs: structured JSON logs of keel run events through pino. Explicit exports only.
export { type EventLine, eventLine, type LogLevel } from './event-line.js';
export { type KeelLogs, type KeelLogsOptions, keelLogs } from './logs.js';
export { redactFields } from './redact-fields.js';
