/** Listening on controller-runtime style bind addresses (`:8081`, `127.0.0.1:8443`, `[::1]:9443`). */
import type { Server } from 'node:net';
import type { Socket } from 'node:net';

export interface BoundServer {
  /** `host:port` actually bound. */
  address: string;
  port: number;
  close(): Promise<void>;
}

/** Parses `host:port` / `:port`; host '' means all interfaces. */
export function parseBindAddress(bind: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(bind.trim());
  if (!m) throw new Error(`invalid bind address ${JSON.stringify(bind)}: expected host:port or :port`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid port in bind address ${bind}`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/** Listens and tracks connections so `close` ends keep-alive sockets instead of waiting for them. */
export function listen(server: Server, bind: string): Promise<BoundServer> {
  const { host, port } = parseBindAddress(bind);
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const onListening = () => {
      server.off('error', reject);
      const addr = server.address();
      const actualPort = typeof addr === 'object' && addr ? addr.port : port;
      const actualHost = typeof addr === 'object' && addr ? addr.address : host;
      resolve({
        address: `${actualHost.includes(':') ? `[${actualHost}]` : actualHost}:${actualPort}`,
        port: actualPort,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            for (const s of sockets) s.destroy();
          }),
      });
    };
    if (host) server.listen(port, host, onListening);
    else server.listen(port, onListening);
  });
}
