import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { median } from './lib.js';

/** One kind of request of the mixed load, sent back to back by `loops` clients. */
export interface Operation {
  name: string;
  loops: number;
  /** Sends one request (loop `i`), resolving to its status and body. */
  send(http: HttpClient, loop: number): Promise<{ status: number; body: string }>;
  /** The statuses that count as success. */
  ok: (status: number) => boolean;
  /** Called with each successful answer (a refresh chain keeps its next token). */
  onOk?: (body: string, loop: number) => void;
}

export interface OperationFigure {
  name: string;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** The first failed answer, to say what went wrong. */
  firstError?: string;
}

export type HttpClient = (
  url: string,
  init?: { method?: string; headers?: Record<string, string>; body?: string },
) => Promise<{ status: number; body: string }>;

/** node:http on kept-alive sockets (fetch spends about twice the CPU per request). */
function httpClient(agent: Agent): HttpClient {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      if (!/^http:\/\/127\.0\.0\.1[:/]/.test(url)) {
        reject(new Error(`refusing non-loopback ${url}`));
        return;
      }
      const headers = { ...init.headers };
      if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
      const req = request(url, { method: init.method ?? 'GET', agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(init.body);
    });
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/**
 * Runs every operation at once for `seconds` (bounded in time, 127.0.0.1 only) and
 * reports each one's rate, latency percentiles and failures.
 */
export async function runMixed(
  operations: Operation[],
  seconds: number,
): Promise<OperationFigure[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const http = httpClient(agent);
  const end = performance.now() + seconds * 1000;
  const started = performance.now();
  try {
    const figures = await Promise.all(
      operations.map(async (operation) => {
        const latencies: number[] = [];
        let errors = 0;
        let firstError: string | undefined;
        await Promise.all(
          Array.from({ length: operation.loops }, async (_, loop) => {
            while (performance.now() < end) {
              const sent = performance.now();
              try {
                const { status, body } = await operation.send(http, loop);
                if (!operation.ok(status)) throw new Error(`${status} ${body.slice(0, 200)}`);
                latencies.push(performance.now() - sent);
                operation.onOk?.(body, loop);
              } catch (error) {
                errors++;
                firstError ??= (error as Error).message;
                // A failed chain or a refused request is not retried in a tight loop.
                await new Promise((resolve) => setTimeout(resolve, 50));
              }
            }
          }),
        );
        const sorted = latencies.sort((a, b) => a - b);
        return {
          name: operation.name,
          perSecond: Math.round((latencies.length * 1000) / (performance.now() - started)),
          p50Ms: Math.round(median(sorted) * 10) / 10,
          p99Ms: Math.round(percentile(sorted, 0.99) * 10) / 10,
          errors,
          ...(firstError === undefined ? {} : { firstError }),
        };
      }),
    );
    return figures;
  } finally {
    agent.destroy();
  }
}

/** An Idempotency-Key of its own for every payment. */
export const idempotencyKey = () => randomUUID();
