/**
 * Runs a KV Connect server by hand:
 *
 * ```sh
 * DENO_KV_ACCESS_TOKEN=<token> deno run -A testing/kv_connect/main.ts --port 4512 --path ./data/kv.sqlite
 * ```
 *
 * Flags: `--port P` (default 0: a free port), `--path FILE` (required),
 * `--hostname H` (default 127.0.0.1), `--token T` (default: the
 * `DENO_KV_ACCESS_TOKEN` environment variable), `--lose-answers N` (for
 * tests: every Nth atomic write is applied and its answer lost, a 503). Prints
 * `kv-connect listening on http://HOST:PORT` on stderr once it listens, and
 * stops cleanly on SIGTERM or SIGINT.
 * @module
 */

import { parseArgs } from "node:util";
import { serveKvConnect, type ServeOptions } from "./server.ts";

/** denokv refuses to serve with a shorter access token. */
export const MIN_TOKEN_LENGTH = 12;

/**
 * Reads the command line and environment into server options.
 *
 * @throws {Error} if `--path` is missing, the port is not a port number, or
 * the token is missing or shorter than denokv accepts.
 */
export function parseOptions(args: string[], env: { token?: string } = {}): ServeOptions {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string", default: "0" },
      path: { type: "string" },
      hostname: { type: "string", default: "127.0.0.1" },
      token: { type: "string" },
      "lose-answers": { type: "string" },
    },
    strict: true,
  });
  if (!values.path) throw new Error("--path FILE is required");
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be a port number, got ${values.port}`);
  }
  const token = values.token ?? env.token;
  if (!token) throw new Error("no access token: set DENO_KV_ACCESS_TOKEN or pass --token");
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(`Access token must be at minimum ${MIN_TOKEN_LENGTH} chars long.`);
  }
  const lose = values["lose-answers"];
  const loseAnswers = lose === undefined ? undefined : Number(lose);
  if (loseAnswers !== undefined && !(Number.isInteger(loseAnswers) && loseAnswers >= 1)) {
    throw new Error(`--lose-answers must be a whole number of at least 1, got ${lose}`);
  }
  const options: ServeOptions = { path: values.path, port, hostname: values.hostname, token };
  if (loseAnswers !== undefined) options.loseAnswers = loseAnswers;
  return options;
}

async function main(): Promise<void> {
  let options: ServeOptions;
  try {
    options = parseOptions(Deno.args, { token: Deno.env.get("DENO_KV_ACCESS_TOKEN") });
  } catch (error) {
    console.error(`kv-connect: ${(error as Error).message}`);
    Deno.exit(2);
  }
  const server = serveKvConnect(options);
  console.error(`kv-connect listening on ${server.url} (database ${options.path})`);
  const stop = () => server.shutdown();
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  await server.finished;
  // A watch the client dropped leaves the addon's dequeue pending until its
  // keys next change, and that pending call keeps the event loop alive
  // (observed: the process lingered after a clean shutdown), so exit here.
  Deno.exit(0);
}

if (import.meta.main) await main();
