// Server-sent events over fetch (WHATWG HTML §9.2), parsed incrementally; reconnects with Last-Event-ID.
import { ApiError, NetworkError, PortcullisError, TimeoutError } from './errors.js';
import { authorize, refreshOnceAfter401, useDpopNonce, type Http } from './http.js';
import { parseRetryAfter } from './retry.js';

export interface SseEvent {
  /** Last event id seen on this stream (the `id:` field persists across events). */
  id: string | undefined;
  /** `event:` field, `message` when absent. */
  event: string;
  /** `data:` lines joined with `\n`. */
  data: string;
}

export interface StreamOptions {
  /** Resume after this event id (sent as `Last-Event-ID` on the first connect). */
  lastEventId?: string;
  /** Ends the iteration (without error) when aborted. */
  signal?: AbortSignal;
  /** Path below baseUrl. Default `/stream`. */
  path?: string;
  /** Reconnection time until the server sends `retry:`. Default 1000 ms. */
  reconnectDelayMs?: number;
  /** Cap of the reconnect backoff. Default 30000 ms. */
  maxReconnectDelayMs?: number;
  /** Consecutive reconnects without a delivered event before giving up. Default Infinity. */
  maxReconnectAttempts?: number;
  /** Called at each connection the server accepts (EventSource's `open`). */
  onOpen?: () => void;
  /** Called when a connection fails or ends and a reconnect follows, with why. */
  onError?: (error: unknown) => void;
}

export interface SseParser {
  feed(text: string): void;
}

export function createSseParser(
  onEvent: (event: SseEvent) => void,
  onRetry: (ms: number) => void,
): SseParser {
  let buffer = '';
  let skipLeadingLF = false; // a chunk ended in CR: a following LF belongs to the same line end
  let data: string[] = [];
  let eventType = '';
  let lastId: string | undefined;

  function line(text: string): void {
    if (text === '') {
      if (data.length > 0)
        onEvent({ id: lastId, event: eventType || 'message', data: data.join('\n') });
      data = [];
      eventType = '';
      return;
    }
    if (text.startsWith(':')) return; // comment / heartbeat
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\0')) lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
  }

  return {
    feed(text) {
      let s = buffer + text;
      let pos = 0;
      if (skipLeadingLF && s.startsWith('\n')) pos = 1;
      skipLeadingLF = false;
      for (;;) {
        const cr = s.indexOf('\r', pos);
        const lf = s.indexOf('\n', pos);
        if (cr === -1 && lf === -1) break;
        if (cr !== -1 && (lf === -1 || cr < lf)) {
          line(s.slice(pos, cr));
          if (cr + 1 === s.length) skipLeadingLF = true;
          pos = s[cr + 1] === '\n' ? cr + 2 : cr + 1;
        } else {
          line(s.slice(pos, lf));
          pos = lf + 1;
        }
      }
      s = s.slice(pos);
      buffer = s;
    },
  };
}

/** Opens GET /stream and yields its events until `signal` aborts or reconnects run out. */
export async function* openStream(
  http: Http,
  options: StreamOptions = {},
): AsyncGenerator<SseEvent, void, undefined> {
  const { settings } = http;
  const userSignal = options.signal;
  const maxAttempts = options.maxReconnectAttempts ?? Infinity;
  const maxDelay = options.maxReconnectDelayMs ?? 30_000;
  let reconnectMs = options.reconnectDelayMs ?? 1000;
  let lastEventId = options.lastEventId;
  let failures = 0; // consecutive connections that delivered nothing
  let refreshed = false;
  let nonceRetried = false;
  let lastError: unknown;

  while (!userSignal?.aborted) {
    if (failures > 0) {
      if (failures > maxAttempts) throw lastError;
      options.onError?.(lastError);
      const grown = Math.min(maxDelay, reconnectMs * 2 ** (failures - 1));
      const delay =
        failures === 1 ? reconnectMs : grown / 2 + settings.retry.random() * (grown / 2);
      try {
        await settings.retry.sleep(delay, userSignal);
      } catch {
        return;
      }
    }

    const controller = new AbortController();
    const onAbort = (): void => controller.abort(userSignal?.reason);
    userSignal?.addEventListener('abort', onAbort, { once: true });
    try {
      const token = await settings.tokens.current();
      const headers = new Headers(settings.headers);
      // No Cache-Control request header: cross-origin it would need CORS; the `cache` mode does it instead.
      headers.set('Accept', 'text/event-stream');
      const url = http.url(options.path ?? '/stream');
      await authorize(settings, headers, { method: 'GET', url, token });
      if (lastEventId !== undefined) headers.set('Last-Event-ID', lastEventId);

      let response: Response;
      // The timeout covers connecting only: an open stream may stay quiet for long.
      const timer = setTimeout(
        () => controller.abort(new TimeoutError(settings.timeoutMs)),
        settings.timeoutMs,
      );
      try {
        response = await settings.fetch(url, {
          headers,
          cache: 'no-store',
          redirect: 'follow',
          credentials: settings.credentials,
          signal: controller.signal,
        });
      } catch (err) {
        if (userSignal?.aborted) return;
        lastError =
          controller.signal.reason instanceof TimeoutError
            ? controller.signal.reason
            : new NetworkError(`stream connect failed: ${(err as Error).message}`, { cause: err });
        failures++;
        continue;
      } finally {
        clearTimeout(timer);
      }

      if ((await useDpopNonce(settings, url, response)) && !nonceRetried) {
        nonceRetried = true;
        await response.body?.cancel();
        continue;
      }
      if (response.status === 401) {
        const body = parseMaybeJson(await response.text().catch(() => ''));
        await refreshOnceAfter401(settings, token, response, body, refreshed);
        refreshed = true;
        continue;
      }
      // WHATWG: 204 No Content tells the client to stop reconnecting.
      if (response.status === 204) return;
      if (!response.ok) {
        const text = await response.text().catch(() => '');
        const body = parseMaybeJson(text);
        const retryAfterMs = parseRetryAfter(response.headers.get('Retry-After'));
        const error = new ApiError(response.status, body, response.headers, { retryAfterMs });
        if (response.status !== 429 && response.status < 500) throw error;
        if (retryAfterMs !== undefined) reconnectMs = Math.max(reconnectMs, retryAfterMs);
        lastError = error;
        failures++;
        continue;
      }
      const type = response.headers.get('Content-Type') ?? '';
      if (!type.toLowerCase().startsWith('text/event-stream') || !response.body) {
        await response.body?.cancel();
        throw new PortcullisError('sse', `expected text/event-stream, got "${type}"`);
      }
      refreshed = false;
      options.onOpen?.();

      const queue: SseEvent[] = [];
      const parser = createSseParser(
        (event) => queue.push(event),
        (ms) => {
          reconnectMs = ms;
        },
      );
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let delivered = false;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(value);
          for (const event of queue.splice(0)) {
            delivered = true;
            if (event.id !== undefined) lastEventId = event.id;
            yield event;
          }
        }
        lastError = new NetworkError('stream ended');
      } catch (err) {
        if (userSignal?.aborted) return;
        lastError = new NetworkError(`stream broke: ${(err as Error).message}`, { cause: err });
      }
      failures = delivered ? 1 : failures + 1;
    } finally {
      userSignal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
