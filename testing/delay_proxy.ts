/**
 * A TCP proxy that holds every chunk it forwards for a fixed time, each way:
 * a network link of that one-way latency, for measuring the service against
 * a KV over a network (these machines have no `netem`). Chunks keep their
 * order and do not wait on each other: the link delays, it does not throttle.
 *
 * ```sh
 * deno run -A testing/delay_proxy.ts --target 127.0.0.2:4512 --delay-ms 25 --port 4513
 * ```
 *
 * Flags: `--target HOST:PORT` (required), `--delay-ms D` (each way, default
 * 0), `--hostname H` (default 127.0.0.2, see `kv_connect/start.ts`),
 * `--port P` (default 0: a free port). Prints `delay-proxy listening on
 * http://HOST:PORT` on stderr once it listens; stops on SIGTERM or SIGINT.
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { spawnServer } from "./spawn_server.ts";

/** Options of {@link serveDelayProxy}. */
export interface DelayProxyOptions {
  /** Where connections go. */
  target: { hostname: string; port: number };
  /** How long each chunk is held, each way. */
  delayMs: number;
  hostname: string;
  port: number;
}

/** Forwards `from` to `to`, each chunk `delayMs` after it arrived, in order. */
async function pipeDelayed(from: Deno.Conn, to: Deno.Conn, delayMs: number): Promise<void> {
  const queue: { at: number; data: Uint8Array }[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const writer = (async () => {
    for (;;) {
      const next = queue.shift();
      if (!next) {
        if (ended) return;
        await new Promise<void>((resolve) => wake = resolve);
        wake = undefined;
        continue;
      }
      const wait = next.at - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      let written = 0;
      while (written < next.data.byteLength) {
        written += await to.write(next.data.subarray(written));
      }
    }
  })();
  try {
    for (;;) {
      const buffer = new Uint8Array(64 * 1024);
      const n = await from.read(buffer);
      if (n === null) break;
      queue.push({ at: performance.now() + delayMs, data: buffer.subarray(0, n) });
      wake?.();
    }
  } catch {
    // The connection was reset: the other side is told by closing.
  } finally {
    ended = true;
    wake?.();
  }
  try {
    await writer;
    await to.closeWrite();
  } catch {
    // The other side went away first.
  }
}

async function forward(client: Deno.TcpConn, options: DelayProxyOptions): Promise<void> {
  let server: Deno.TcpConn;
  try {
    server = await Deno.connect({ ...options.target, transport: "tcp" });
  } catch {
    client.close();
    return;
  }
  client.setNoDelay(true);
  server.setNoDelay(true);
  await Promise.all([
    pipeDelayed(client, server, options.delayMs),
    pipeDelayed(server, client, options.delayMs),
  ]);
  for (const conn of [client, server]) {
    try {
      conn.close();
    } catch {
      // Closed already.
    }
  }
}

/** A running proxy. */
export interface DelayProxy {
  /** Where it listens. */
  addr: Deno.NetAddr;
  /** Stops listening; connections already made end when their ends close. */
  close(): void;
  /** Settles once the listener has stopped. */
  finished: Promise<void>;
}

/** Starts a delaying proxy in this process. */
export function serveDelayProxy(options: DelayProxyOptions): DelayProxy {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const finished = (async () => {
    try {
      for await (const conn of listener) void forward(conn, options);
    } catch {
      // Closed.
    }
  })();
  return {
    addr: listener.addr,
    close: () => {
      try {
        listener.close();
      } catch {
        // Closed already.
      }
    },
    finished,
  };
}

/**
 * Reads the command line into proxy options.
 *
 * @throws {Error} when `--target` is missing or malformed, or a number is not one.
 */
export function parseProxyOptions(args: string[]): DelayProxyOptions {
  const { values } = parseArgs({
    args,
    options: {
      target: { type: "string" },
      "delay-ms": { type: "string", default: "0" },
      hostname: { type: "string", default: "127.0.0.2" },
      port: { type: "string", default: "0" },
    },
    strict: true,
  });
  const target = /^(.+):([0-9]{1,5})$/.exec(values.target ?? "");
  if (!target) throw new Error("--target HOST:PORT is required");
  const delayMs = Number(values["delay-ms"]);
  const port = Number(values.port);
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new Error("--delay-ms must be ≥ 0");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port: a port");
  return {
    target: { hostname: target[1], port: Number(target[2]) },
    delayMs,
    hostname: values.hostname,
    port,
  };
}

/** A proxy running as a process of its own. */
export interface StartedDelayProxy {
  /** Where it listens, `http://HOST:PORT` (a KV Connect URL through it). */
  url: string;
  pid: number;
  /** Stops it and waits until it exited. */
  close(): Promise<void>;
}

/**
 * Starts the proxy as a process of its own (so its timers do not share a
 * thread with what is measured) in front of `target` (`http://HOST:PORT`).
 *
 * @throws {Error} when it exits or stays silent before it listens.
 */
export async function startDelayProxy(
  options: { target: string; delayMs: number },
): Promise<StartedDelayProxy> {
  const target = new URL(options.target);
  const proxy = await spawnServer({
    script: join(dirname(fileURLToPath(import.meta.url)), "delay_proxy.ts"),
    args: ["--target", `${target.hostname}:${target.port}`, "--delay-ms", String(options.delayMs)],
    stdout: "inherit",
    listening: /delay-proxy listening on (http:\/\/\S+:\d+)/,
  });
  return {
    url: proxy.url,
    pid: proxy.pid,
    close: () => proxy.stop(),
  };
}

if (import.meta.main) {
  let options: DelayProxyOptions;
  try {
    options = parseProxyOptions(Deno.args);
  } catch (error) {
    console.error(`delay-proxy: ${(error as Error).message}`);
    Deno.exit(2);
  }
  const proxy = serveDelayProxy(options);
  console.error(`delay-proxy listening on http://${proxy.addr.hostname}:${proxy.addr.port}`);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => {
      proxy.close();
      Deno.exit(0);
    });
  }
  await proxy.finished;
}
