import type { EventRecord, EventsRepo, TailPosition } from '../data/events-repo.js';

/** Outbox events to this instance's listeners (docs/architecture.md#the-event-stream). */
export type EventListener = (event: EventRecord) => void;

export interface EventBus {
  /** Delivers every event committed from now on; resolves once the start position is fixed. */
  subscribe(listener: EventListener, onClose?: () => void): Promise<() => void>;
  readonly closed: boolean;
  listenerCount(): number;
  poll(): Promise<void>;
  close(): Promise<void>;
}

const BATCH = 500;
let liveListeners = 0;

export function activeListeners(): number {
  return liveListeners;
}

export function createEventBus(options: {
  events: Pick<EventsRepo, 'tail' | 'tailStart'>;
  pollMs: number;
  onError: (error: unknown) => void;
}): EventBus {
  const listeners = new Map<EventListener, (() => void) | undefined>();
  // One "run" per period with listeners; a poll of an earlier run never moves this one.
  type Run = { cursor: TailPosition | undefined; started: Promise<void>; timer: NodeJS.Timeout };
  let run: Run | undefined;
  let running: Promise<void> | undefined;
  let closed = false;

  async function readNew(): Promise<void> {
    const current = run;
    if (!current?.cursor) return;
    for (;;) {
      const { events, next } = await options.events.tail(current.cursor, BATCH);
      current.cursor = next;
      for (const event of events) {
        for (const listener of [...listeners.keys()]) {
          if (run !== current) return;
          try {
            listener(event);
          } catch (error) {
            options.onError(error);
          }
        }
      }
      if (events.length < BATCH) return;
    }
  }

  function poll(): Promise<void> {
    running ??= readNew()
      .catch(options.onError)
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function start(): Promise<void> {
    if (!run) {
      const timer = setInterval(() => void poll(), options.pollMs);
      timer.unref();
      const current: Run = { cursor: undefined, timer, started: Promise.resolve() };
      current.started = options.events.tailStart().then(
        (cursor) => {
          current.cursor = cursor;
        },
        (error: unknown) => {
          if (run === current) stop();
          throw error;
        },
      );
      run = current;
    }
    return run.started;
  }

  function stop(): void {
    if (run) clearInterval(run.timer);
    run = undefined;
  }

  function remove(listener: EventListener): void {
    if (!listeners.delete(listener)) return;
    liveListeners -= 1;
    // Nobody listens: stop polling. The next subscriber starts from its own "now".
    if (listeners.size === 0) stop();
  }

  return {
    async subscribe(listener, onClose) {
      if (closed) throw new Error('event bus closed');
      listeners.set(listener, onClose);
      liveListeners += 1;
      try {
        await start();
      } catch (error) {
        remove(listener);
        throw error;
      }
      return () => remove(listener);
    },
    get closed() {
      return closed;
    },
    listenerCount: () => listeners.size,
    poll,
    async close() {
      closed = true;
      const ending = [...listeners];
      for (const [listener] of ending) remove(listener);
      for (const [, onClose] of ending) onClose?.();
      stop();
      await running;
    },
  };
}
