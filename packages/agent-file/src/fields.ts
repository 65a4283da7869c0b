// The fields an agent file may hold, section by section: the same lists the loader checks unknown fields against
// (a misspelt field gets "did you mean"). The documentation's agent-file reference is generated from this table, so a
// field added to a loader's list appears there without another edit.
import { LIMIT_FIELDS, RETRY_FIELDS, TOP_LEVEL_FIELDS } from './agent-file.js';
import { FIELDS as COMMAND_FIELDS, LIMITS as COMMAND_LIMIT_FIELDS } from './command.js';
import { FIELDS as HTTP_FIELDS } from './http.js';
import { FIELDS as MCP_FIELDS } from './mcp.js';
import { MODEL_FIELDS } from './model.js';

/** One section of an agent file: where it sits (`''` for the top level, `tools[].command`) and its fields. */
export interface AgentFileSection {
  readonly path: string;
  readonly fields: readonly string[];
}

/** Every section of an agent file and the fields the loader accepts there, in the loader's order. */
export const AGENT_FILE_SECTIONS: readonly AgentFileSection[] = [
  { path: '', fields: TOP_LEVEL_FIELDS },
  { path: 'model', fields: MODEL_FIELDS },
  { path: 'limits', fields: LIMIT_FIELDS },
  { path: 'retry', fields: RETRY_FIELDS },
  { path: 'tools[].mcp', fields: MCP_FIELDS },
  { path: 'tools[].command', fields: COMMAND_FIELDS },
  { path: 'tools[].command.limits', fields: COMMAND_LIMIT_FIELDS },
  { path: 'tools[].http', fields: HTTP_FIELDS },
];
