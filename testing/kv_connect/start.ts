/**
 * Starts a KV Connect server (`main.ts` beside this file) as a process of its
 * own, the way a self-hosted denokv runs beside the service.
 *
 * ```ts
 * const server = await startKvConnectServer();
 * Deno.env.set("DENO_KV_ACCESS_TOKEN", server.token);
 * const kv = await Deno.openKv(server.url);
 * // ...
 * kv.close();
 * await server.close();
 * ```
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectRoot, spawnServer } from "../spawn_server.ts";

const here = dirname(fileURLToPath(import.meta.url));
const LISTEN_TIMEOUT_MS = 20_000;

/**
 * The loopback address the server listens on. Deno's KV Connect client
 * leaves Nagle's algorithm on (it sets TCP_NODELAY to 0, seen with strace),
 * so a request of more than one segment (a commit of a few intents) waits
 * for the server's ACK of the first, which Linux delays (its delayed ACK).
 * A route to this address with `quickack 1` makes the server ACK at once:
 * `.ci/run` adds it, as an operator of denokv does for the routes to its
 * clients (see docs/deployment.md). Without the route everything works, slowly.
 */
export const KV_CONNECT_HOST = "127.0.0.2";

/** Options of {@link startKvConnectServer}. */
export interface StartKvConnectOptions {
  /** SQLite file; default: `kv.sqlite` in a new temp directory. */
  path?: string;
  /** Access token; default: a random one. */
  token?: string;
  /** Loses the answer of every Nth atomic write after applying it (see `handler.ts`). */
  loseAnswers?: number;
}

/** A running server process. */
export interface StartedKvConnectServer {
  /** The KV Connect URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** The token to set as `DENO_KV_ACCESS_TOKEN`. */
  token: string;
  /** The SQLite file the server keeps its data in. */
  path: string;
  /** Its process id (for its CPU time). */
  pid: number;
  /** Stops the process (SIGTERM) and waits for it to exit. */
  close(): Promise<void>;
}

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Spawns `deno run -A testing/kv_connect/main.ts` on a free port and waits
 * until it prints the address it listens on.
 *
 * @throws {Error} if the process exits or stays silent for 20 s before it
 * listens; its stderr is in the message.
 */
export async function startKvConnectServer(
  options: StartKvConnectOptions = {},
): Promise<StartedKvConnectServer> {
  const path = options.path ??
    join(await Deno.makeTempDir({ prefix: "kv-connect-" }), "kv.sqlite");
  const token = options.token ?? randomToken();
  const server = await spawnServer({
    script: join(here, "main.ts"),
    args: [
      "--hostname",
      KV_CONNECT_HOST,
      "--port",
      "0",
      "--path",
      path,
      ...(options.loseAnswers === undefined ? [] : ["--lose-answers", String(options.loseAnswers)]),
    ],
    flags: ["--quiet", "--config", join(projectRoot, "deno.json")],
    env: { DENO_KV_ACCESS_TOKEN: token },
    stdout: "inherit",
    listening: /kv-connect listening on (http:\/\/\S+)/,
    timeoutMs: LISTEN_TIMEOUT_MS,
  });
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    token,
    path,
    pid: server.pid,
    close() {
      closing ??= server.stop();
      return closing;
    },
  };
}
