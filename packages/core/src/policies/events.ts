import { messageOf } from '../errors/error-chain.js';
import type { Disposable, Event } from './policy.js';

/**
 * A minimal synchronous event emitter. `hasListeners` lets a policy skip building an event (and timing work) when
 * nobody listens. A listener that throws does not break the policy: its error is reported as a process warning.
 */
export class Emitter<T> {
  private listeners: Array<(event: T) => void> = [];

  /** Subscribe with `emitter.event(listener)`. */
  readonly event: Event<T> = (listener) => {
    this.listeners = [...this.listeners, listener];
    const disposable: Disposable = {
      dispose: () => {
        this.listeners = this.listeners.filter((item) => item !== listener);
      },
    };
    return disposable;
  };

  get hasListeners(): boolean {
    return this.listeners.length > 0;
  }

  emit(value: T): void {
    for (const listener of this.listeners) {
      try {
        listener(value);
      } catch (error) {
        process.emitWarning(`keel: an event listener threw: ${messageOf(error)}`);
      }
    }
  }
}
