import type { Logger } from 'pino';

export interface AlertSender {
  /** Best effort: never throws; resolves when the POST finished or timed out. */
  send(event: Record<string, unknown>): Promise<void>;
}

/** POSTs security events as JSON to ALERT_WEBHOOK_URL, with a bounded timeout. */
export function createAlertSender(
  url: string | undefined,
  logger: Logger,
  timeoutMs = 3000,
): AlertSender {
  return {
    async send(event) {
      if (!url) return;
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
          redirect: 'error',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.body?.cancel();
        if (!res.ok) logger.warn({ status: res.status }, 'alert webhook answered an error');
      } catch (error) {
        logger.warn({ err: error }, 'alert webhook failed');
      }
    },
  };
}
