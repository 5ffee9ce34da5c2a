import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';

/** An https server on 127.0.0.1 serving JSON documents (OAuth Client ID Metadata Documents). */
export interface DocumentServer {
  /** `https://127.0.0.1:<port>`. */
  origin: string;
  /** Serves `body` at `pathname` (with `headers`, after `delayMs`); returns the document's URL. */
  serve(
    pathname: string,
    body: unknown,
    headers?: Record<string, string>,
    options?: { delayMs?: number },
  ): string;
  /** How many times each path was fetched. */
  fetches: Map<string, number>;
  close(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made by openssl for this run. */
async function selfSignedCertificate(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'portcullis-tls-'));
  try {
    await promisify(execFile)('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
      ...['-days', '2', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    ]);
    const [key, cert] = await Promise.all([
      readFile(path.join(dir, 'key.pem'), 'utf8'),
      readFile(path.join(dir, 'cert.pem'), 'utf8'),
    ]);
    return { key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the server and makes this process trust its certificate (what NODE_EXTRA_CA_CERTS
 * does for a process started with it), so the in-process auth server fetches from it.
 */
export async function startDocumentServer(): Promise<DocumentServer> {
  const { key, cert } = await selfSignedCertificate();
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), cert]);
  const documents = new Map<
    string,
    { body: string; headers: Record<string, string>; delayMs: number }
  >();
  const fetches = new Map<string, number>();
  const server = createServer({ key, cert }, (req, res) => {
    const pathname = new URL(req.url ?? '/', 'https://127.0.0.1').pathname;
    fetches.set(pathname, (fetches.get(pathname) ?? 0) + 1);
    const doc = documents.get(pathname);
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    const answer = () =>
      res.writeHead(200, { 'content-type': 'application/json', ...doc.headers }).end(doc.body);
    if (doc.delayMs > 0) setTimeout(answer, doc.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    fetches,
    serve(pathname, body, headers = {}, { delayMs = 0 } = {}) {
      documents.set(pathname, { body: JSON.stringify(body), headers, delayMs });
      return `${origin}${pathname}`;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
