// The public surface of @keel/chaos. Every name is exported explicitly: adding one here makes it public API.

export { answerCheck } from './answer-check.js';
export { type ChildErrorsSeen, childErrorsSeen } from './child-errors.js';
export { type KillPlan, killPlan } from './crash-scenario.js';
export {
  canonicalJson,
  completedEffects,
  duplicateEffects,
  EffectLedger,
  type EffectRecord,
  effectsThatHappened,
} from './effect-ledger.js';
export {
  type BuiltKeelAgent,
  endingOf,
  type KeelAgentParts,
  type KeelSubjectOptions,
  keelSubject,
} from './keel-subject.js';
export { renderHtml } from './render-html.js';
export {
  alignColumns,
  formatDuration,
  goalSummary,
  progressLine,
  renderTable,
  rowOf,
  topFailures,
} from './render-table.js';
export { type ChaosOptions, type ChaosReport, runChaos } from './run-chaos.js';
export { INCOMPLETE_ANSWER } from './run-sample.js';
export {
  type ChaosScenario,
  type GoalName,
  MAX_RECALLS,
  type ModelFaults,
  type ScenarioQuota,
  type ToolFaults,
} from './scenario.js';
export { checkScenario } from './scenario-check.js';
export { loadScenarios } from './scenario-module.js';
export {
  type Calibration,
  CHILD_MODEL,
  childFallbackName,
  fallbackName,
  scenarioSchedule,
} from './scenario-server.js';
export { SCENARIO_NAMES, SCENARIOS, selectScenarios } from './scenarios.js';
export {
  formatPercent,
  formatShare,
  GOAL_TARGETS,
  type GoalResult,
  IN_FLIGHT_MS,
  minimumRequests,
  probesWhileDown,
  type RequestSample,
  type RunSample,
  type ScenarioObservation,
  type Scorecard,
  scorecardOf,
  type WindowSample,
} from './scorecard.js';
export { chaosRunOf, drawAt, runIdOf, seedOf } from './seeds.js';
export { percentile, ratio } from './statistics.js';
export {
  type BreakerMoveRecord,
  CHILD_TOOL,
  type ChaosEnvironment,
  type ChaosModel,
  type ChaosSubject,
  type CreateChaosSubject,
  type PreparedSubject,
  type RunEnding,
} from './subject.js';
export { type Timeline, timelineOf } from './timeline.js';
export { instrumentTools, type ToolFault, type ToolInstrumentation, toolFaultAt } from './tool-faults.js';
