import type { ToolChoice } from '../../spec/model.js';

/**
 * What is wrong with a `toolChoice` for an agent offering `toolNames` (`sourced`: tool sources may add tools later,
 * so a named tool is not checked against them), as a message that says what to fix; undefined when it is fine.
 */
export function toolChoiceProblem(
  choice: unknown,
  toolNames: readonly string[],
  sourced: boolean,
): string | undefined {
  if (choice === 'auto' || choice === 'none') return undefined;
  const offered = toolNames.length === 0 ? 'the agent has no tools' : `its tools: ${toolNames.join(', ')}`;
  if (choice === 'required') {
    return toolNames.length === 0 && !sourced ? `toolChoice "required" needs a tool (${offered})` : undefined;
  }
  const name = (choice as { name?: unknown } | null)?.name;
  if (typeof choice !== 'object' || choice === null || typeof name !== 'string' || name === '') {
    return `toolChoice must be 'auto', 'none', 'required' or { name: '<tool>' }; got ${JSON.stringify(choice)}`;
  }
  if (Object.keys(choice).some((key) => key !== 'name')) return 'toolChoice { name } takes no other field';
  if (!sourced && !toolNames.includes(name))
    return `toolChoice names the unknown tool "${name}" (${offered})`;
  return undefined;
}

/** Whether the choice makes the model call a tool: `required` or a named tool. */
export function forcesToolCall(choice: ToolChoice | undefined): boolean {
  return choice === 'required' || typeof choice === 'object';
}
