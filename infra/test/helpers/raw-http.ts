import { Writable } from 'node:stream';
import { connect } from 'node:net';
import { createLogger } from '@portcullis/observability';
import type { Logger } from 'pino';

/** A logger as the apps make it (createLogger), at debug, whose output the test reads back. */
export function capturedLogger(): { logger: Logger; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), text: () => chunks.join('') };
}

/**
 * Sends `bytes` as they are on a new TCP connection to `url`'s host and port and resolves
 * with everything the server sent back once it closed the connection (or after 10 s).
 */
export function rawExchange(url: string, bytes: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (d: Buffer) => received.push(d));
    // A reset after the server's answer is fine here: the test reads what arrived.
    socket.on('error', () => {});
    socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')));
  });
}

/**
 * `secret` as a log could hold it, alone or inside a larger buffer: as text, as a byte
 * array's numbers, in hex, and in base64 and base64url at each of the three byte offsets
 * (the characters that depend on the secret's bytes only).
 */
export function encodingsOf(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const base64 = [0, 1, 2].flatMap((offset) => {
    const shifted = Buffer.concat([Buffer.alloc(offset), bytes]);
    const start = offset === 0 ? 0 : 4;
    const cores = [shifted.toString('base64'), shifted.toString('base64url')];
    return cores.map((text) => text.slice(start, text.length - 4));
  });
  return [secret, Array.from(bytes).join(','), bytes.toString('hex'), ...base64];
}

/**
 * A client that writes its whole request (`head`, then a `bodyBytes` body) before it reads
 * anything, as many do: what it reads then, or `<CODE>` when its write failed (EPIPE,
 * ECONNRESET: the server reset the connection before the body was sent).
 */
export async function writeAllThenRead(url: string, head: string, bodyBytes: number) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const failed = new Promise<string>((resolve) =>
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(`<${e.code}>`)),
  );
  socket.pause();
  const request = Buffer.concat([Buffer.from(head), Buffer.alloc(bodyBytes, 97)]);
  const written = new Promise<string>((resolve) =>
    socket.write(request, (error) =>
      resolve(error ? `<${(error as NodeJS.ErrnoException).code}>` : ''),
    ),
  );
  const writeFailure = await Promise.race([written, failed]);
  if (writeFailure) return writeFailure;
  const received: Buffer[] = [];
  socket.on('data', (d: Buffer) => received.push(d));
  socket.resume();
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => resolve(Buffer.concat(received).toString('latin1'))),
  );
  return Promise.race([closed, failed]);
}
