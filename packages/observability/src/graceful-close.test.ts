import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { drainOnClose } from './graceful-close.js';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.closeAllConnections();
});

async function start(handler: Parameters<typeof createServer>[1]) {
  const server = createServer(handler);
  servers.push(server);
  const drain = drainOnClose(server, { timeoutMs: 2000 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, drain, port: (server.address() as AddressInfo).port };
}

/** Everything the server sends on a raw connection until it closes it. */
function readAll(socket: Socket): Promise<string> {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  return new Promise((resolve) => {
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(`${text}<reset>`));
  });
}

describe('drainOnClose', () => {
  it('answers a connection accepted before the shutdown whose request arrives during it', async () => {
    const { server, drain, port } = await start((_req, res) => res.end('done'));
    const accepted = new Promise((r) => server.once('connection', r));
    const socket = connect(port, '127.0.0.1');
    const answer = readAll(socket);
    await accepted;
    const closed = drain.close();
    // The request comes after the shutdown began, on the connection made before it.
    await new Promise((r) => setTimeout(r, 150));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(text).toMatch(/connection: close/i);
    expect(text).toMatch(/done$/);
    await closed;
  });

  it('answers connections the kernel queued while the event loop was busy, instead of resetting them', async () => {
    const { drain, port } = await start((_req, res) => res.end('done'));
    const closed = drain.close();
    const answers = Array.from({ length: 5 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      return readAll(socket);
    });
    // net.connect connects on the next tick; then the loop is held, as a busy server's
    // would be, while the kernel completes the handshakes and queues the connections.
    await new Promise((resolve) => process.nextTick(resolve));
    const until = Date.now() + 200;
    while (Date.now() < until);
    for (const text of await Promise.all(answers)) {
      expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(text).toMatch(/connection: close/i);
    }
    await closed;
  });

  it('ends idle keep-alive connections at once and refuses new connections', async () => {
    const { drain, port } = await start((_req, res) => res.end('ok'));
    const agent = new (await import('node:http')).Agent({ keepAlive: true });
    const status = await new Promise<number | undefined>((resolve, reject) =>
      request({ port, host: '127.0.0.1', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      })
        .on('error', reject)
        .end(),
    );
    expect(status).toBe(200);
    const started = Date.now();
    await drain.close();
    // Well under the keep-alive timeout (5 s) and the drain bound (2 s here).
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(
      new Promise((resolve, reject) =>
        connect(port, '127.0.0.1').on('connect', resolve).on('error', reject),
      ),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    agent.destroy();
  });
});
