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
