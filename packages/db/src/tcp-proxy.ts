import net from 'node:net';

/** A 127.0.0.1 forwarder a test can cut, freeze (held until `thaw`, in order) or restore. */
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

export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
