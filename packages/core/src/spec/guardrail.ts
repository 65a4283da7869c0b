/** Why a guardrail intervened; machine-readable, stable (the Agno `CheckTrigger` values). */
export type GuardrailTrigger =
  | 'prompt_injection'
  | 'pii_detected'
  | 'off_topic'
  | 'input_not_allowed'
  | 'output_not_allowed'
  | 'validation_failed';

/** When a guardrail runs: on the user's input, on the model's final output, or on each tool call before it runs. */
export type GuardrailStage = 'input' | 'output' | 'tool-call';
