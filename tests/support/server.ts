/**
 * The real server process (`main.ts`) on a free port with its own KV file,
 * for the end-to-end suites; started by `testing/spawn_server.ts`, as the
 * load tools start theirs.
 * @module
 */

import { join } from "node:path";
import { serverCommand, type SpawnedServer, spawnServer } from "../../testing/spawn_server.ts";
import { until } from "./time.ts";

/** The admin token of a server started without one. */
export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";

/** The rate limits off (they are on by default); `MAX_PENDING_PER_SIGNER` stays as it is. */
export const TEST_LIMITS_OFF: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_ADDRESS: "0",
  RATE_LIMIT_PER_SIGNER: "0",
  RATE_LIMIT_AUTH_FAILURES: "0",
};

/** A running server process. */
export interface TestServer extends SpawnedServer {
  adminToken: string;
  /** `KV_PATH`: a file path or a KV Connect URL. */
  kvPath: string;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** `KV_PATH`: a KV file or a KV Connect URL; default a new temp file. */
  kvPath?: string;
  /**
   * A command that runs the server, followed by its arguments, e.g.
   * `["setpriv", "--inh-caps=-dac_override", "--"]`; default: none.
   */
  wrapper?: string[];
  /** The Deno binary that runs the server (see `denoBinary`); default: this one. */
  deno?: string;
  /**
   * Deno's flags besides `-A`, before `main.ts`; default `["--quiet"]`. Deno
   * Deploy passes none: `[]` starts the server as it does.
   */
  flags?: string[];
}

/** A fresh temp directory's KV file path. */
export async function tempKvPath(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "intents-test-" });
  return join(dir, "intents.kv");
}

/**
 * Starts `main.ts` as a separate process on a free port and waits until it
 * listens.
 */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const kvPath = options.kvPath ?? await tempKvPath();
  const adminToken = options.env?.ADMIN_TOKEN ?? TEST_ADMIN_TOKEN;
  const server = await spawnServer({
    flags: options.flags,
    deno: options.deno,
    wrapper: options.wrapper,
    env: {
      KV_PATH: kvPath,
      ADMIN_TOKEN: adminToken,
      // Verification on a worker thread, as on a machine of three CPUs or more;
      // the in-process suites cover the serving thread's own path.
      VERIFY_WORKERS: "1",
      // The suites send far more from one address and key than a user would; the
      // suites of the limits turn them on.
      ...TEST_LIMITS_OFF,
      ...options.env,
    },
  });
  return { ...server, adminToken, kvPath };
}

/**
 * Runs `main.ts` with the given environment and returns how it exited, for
 * tests of boot-time refusals.
 */
export async function runServerExpectingExit(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const kvPath = await tempKvPath();
  const { args, cwd } = serverCommand({});
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { PORT: "0", HOSTNAME: "127.0.0.1", KV_PATH: kvPath, ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    signal: AbortSignal.timeout(20_000),
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}

/**
 * The server's request log line for `requestId`, once it is written whole
 * (the log goes out in batches: a moment after the answer).
 */
export async function logLineOf(
  server: Pick<TestServer, "stdout">,
  requestId: string,
): Promise<Record<string, unknown>> {
  const line = () => server.stdout().split("\n").slice(0, -1).find((t) => t.includes(requestId));
  await until(() => line() !== undefined, 5_000, `the log line of ${requestId}`);
  return JSON.parse(line()!);
}
