// @keel/dashboard: a web page over a keel run store. Explicit exports only.
export { type Dashboard, startDashboard } from './dashboard.js';
export {
  type DashboardOptions,
  DEFAULT_HOST,
  DEFAULT_PORT,
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
} from './options.js';
export {
  MAX_REASON_CHARS,
  parseAnswers,
  type ResumeOutcome,
  type ResumeRequest,
  type ResumeRun,
  type RunAnswers,
} from './resume.js';
export type { BreakerRow, RunFilter } from './run-catalog.js';
export type { QueuedRunView, RunBudgets, RunRow, RunView, RunWorker } from './run-view.js';
export {
  buildTimeline,
  TIMELINE_LANES,
  type Timeline,
  type TimelineEntry,
  type TimelineLane,
  type TimelineTiming,
} from './timeline.js';
