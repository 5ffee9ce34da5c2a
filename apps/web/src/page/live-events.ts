/** The live list: GET /stream through the SDK (fetch: EventSource cannot send DPoP headers). */
import {
  ApiError,
  UnauthorizedError,
  type PortcullisClient,
  type SseEvent,
} from '@portcullis/client';
import * as view from './view.js';

export interface LiveEventHandlers {
  onEvent(event: SseEvent, payload: view.StreamPayload | undefined): void;
  onSignedOut(error: UnauthorizedError): void;
}

export function liveEvents(client: PortcullisClient, handlers: LiveEventHandlers) {
  let stream: AbortController | undefined;

  function stop(): void {
    stream?.abort();
    stream = undefined;
    view.streamStatus('offline');
  }

  async function run(controller: AbortController): Promise<void> {
    const events = client.stream({
      signal: controller.signal,
      onOpen: () => view.streamStatus('live', 'live'),
      onError: () => view.streamStatus('reconnecting…'),
    });
    try {
      for await (const event of events) {
        const payload = view.parseStreamEvent(event);
        view.showEvent(event, payload);
        handlers.onEvent(event, payload);
      }
      if (!controller.signal.aborted) view.streamStatus('closed by server');
    } catch (error) {
      if (controller.signal.aborted) return;
      if (error instanceof UnauthorizedError) return handlers.onSignedOut(error);
      if (error instanceof ApiError && (error.status === 403 || error.status === 404)) {
        return view.streamStatus(error.status === 404 ? 'not available' : 'not allowed', 'error');
      }
      view.streamStatus('offline', 'error');
    }
  }

  return {
    start(): void {
      stop();
      stream = new AbortController();
      void run(stream);
    },
    stop,
  };
}
