import net from 'node:net';

/**
 * A TCP forwarder on 127.0.0.1 in front of PostgreSQL or Redis, so a test can take the
 * dependency away (`cut`: connections dropped, new ones refused) and give it back
 * (`restore`: same port) without touching the real server that other tests share.
 * `freeze` plays a server that stops answering without closing anything (its processes
 * stopped with SIGSTOP, or a network partition): connections are still accepted, but
 * nothing is forwarded either way; `thaw` delivers what was held, in order, including
 * the closes that happened meanwhile, as a stopped server's kernel would.
 * `freezeOnReply` freezes at a chosen moment of a conversation: just before the server's
 * first answer that matches (contains a text, or passes a test) reaches the client (the server did the work, the
 * client never hears of it). `freezeOnRequest` freezes just before the client's first
 * message that matches reaches the server (e.g. `COMMIT`: the inserts were done, the
 * commit is held in the network).
 */
export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  freeze(): void;
  freezeOnReply(match: Match): void;
  freezeOnRequest(match: Match): void;
  thaw(): void;
  close(): Promise<void>;
}

/** A text the chunk contains, or a test of the chunk. */
type Match = string | ((chunk: Buffer) => boolean);

const matcher = (match: Match) =>
  typeof match === 'string' ? (chunk: Buffer) => chunk.includes(match) : match;

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let held: Array<() => void> | undefined;
  let freezeOnAnswer: ((chunk: Buffer) => boolean) | undefined;
  let freezeBefore: ((chunk: Buffer) => boolean) | undefined;
  /** Runs `action` now, or at `thaw` while frozen. */
  const deliver = (action: () => void) => (held ? held.push(action) : action());
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const forward = (from: net.Socket, to: net.Socket, reply: boolean) => {
    from.on('data', (chunk: Buffer) => {
      if (reply && freezeOnAnswer?.(chunk)) {
        freezeOnAnswer = undefined;
        held ??= [];
      }
      if (!reply && freezeBefore?.(chunk)) {
        freezeBefore = undefined;
        held ??= [];
      }
      deliver(() => to.write(chunk));
    });
    // `end` after the held writes, so they are flushed first.
    from.on('close', () => deliver(() => to.end()));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    forward(client, upstream, false);
    forward(upstream, client, true);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      held = undefined;
      freezeOnAnswer = undefined;
      freezeBefore = undefined;
      for (const socket of sockets) socket.destroy();
      if (server.listening) server.close(() => resolve());
      else resolve();
    });
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    cut: stop,
    restore: () => listen(port),
    freeze() {
      held ??= [];
    },
    freezeOnReply(match) {
      freezeOnAnswer = matcher(match);
    },
    freezeOnRequest(match) {
      freezeBefore = matcher(match);
    },
    thaw() {
      const actions = held ?? [];
      held = undefined;
      for (const action of actions) action();
    },
    close: stop,
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
