import { messageOf } from '../../errors/error-chain.js';
import type { Emitter } from '../../policies/events.js';
import type { RunEvent, RunEventListener } from '../../spec/run-events.js';

/**
 * Where one run's events go: the agent's subscribers and the run's own `onEvent`. `active` is read before building
 * an event, so that a run nobody watches builds none.
 */
export class RunEventSink {
  constructor(
    private readonly agentEvents: Emitter<RunEvent>,
    private readonly runListener: RunEventListener | undefined,
    /** Keeps a durable run's timed events in its state (`RunState.journal`); never throws. */
    private readonly journal?: RunEventListener,
  ) {}

  get active(): boolean {
    return this.journal !== undefined || this.runListener !== undefined || this.agentEvents.hasListeners;
  }

  emit(event: RunEvent): void {
    this.journal?.(event);
    if (this.runListener !== undefined) {
      try {
        this.runListener(event);
      } catch (error) {
        process.emitWarning(`keel: a run event listener threw: ${messageOf(error)}`);
      }
    }
    this.agentEvents.emit(event);
  }
}
