/**
 * A KV Connect server: denokv's HTTP API over denokv's SQLite backend, on
 * `Deno.serve`.
 *
 * Deno's KV Connect client speaks HTTP/2 cleartext with prior knowledge (its
 * first bytes are the `PRI * HTTP/2.0` preface), and `Deno.serve` accepts
 * that on a plain TCP listener. It also sets TCP_NODELAY on each accepted
 * socket (seen with strace: `setsockopt(fd, SOL_TCP, TCP_NODELAY, [1])`), so
 * a call does not sit out Nagle's algorithm against the peer's delayed ACK.
 * What a call costs over it, against the same file opened directly, is in
 * docs/testing-kv-connect.md.
 * @module
 */

import { openBackend } from "./backend.ts";
import { createKvConnectHandler } from "./handler.ts";

/** Options of {@link serveKvConnect}. */
export interface ServeOptions {
  /** The SQLite file (created if missing). */
  path: string;
  /** The access token clients must present. */
  token: string;
  /** Loses the answer of every Nth atomic write after applying it (see `handler.ts`). */
  loseAnswers?: number;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Address to listen on; default 127.0.0.1. */
  hostname?: string;
}

/** A listening server. */
export interface KvConnectServer {
  /** The KV Connect URL to pass to `Deno.openKv`. */
  url: string;
  port: number;
  /**
   * Ends open watch streams, lets in-flight calls finish, stops listening and
   * closes the database.
   */
  shutdown(): Promise<void>;
  /** Settles once the server has stopped. */
  finished: Promise<void>;
}

/**
 * Opens the database and starts listening.
 *
 * @throws {Error} if the database cannot be opened or the port is taken.
 */
export function serveKvConnect(options: ServeOptions): KvConnectServer {
  const backend = openBackend(options.path);
  const handler = createKvConnectHandler({
    backend,
    token: options.token,
    loseAnswers: options.loseAnswers,
  });
  const hostname = options.hostname ?? "127.0.0.1";
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { port: options.port ?? 0, hostname, onListen: () => {} },
      (request) => handler.handle(request),
    );
  } catch (error) {
    backend.close();
    throw error;
  }
  const finished = server.finished.finally(() => backend.close());
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${server.addr.port}`,
    port: server.addr.port,
    async shutdown() {
      handler.endWatches();
      await server.shutdown();
      await finished;
    },
    finished,
  };
}
