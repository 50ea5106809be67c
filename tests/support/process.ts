/**
 * The harness over a process: the real `main.ts` on a free port (see
 * `server.ts`), reached over HTTP.
 * @module
 */

import {
  type Harness,
  type HarnessOptions,
  harnessOver,
  kvPathOf,
  PASSKEY_ORIGIN,
  runWith,
} from "./harness.ts";
import { type StartOptions, startServer, type TestServer } from "./server.ts";

/** Options of {@link startProcess}: the harness's, and how the process is started. */
export interface ProcessOptions extends HarnessOptions, Omit<StartOptions, "env" | "kvPath"> {}

/** The harness over a server process, and the process. */
export interface ProcessHarness extends Harness {
  server: TestServer;
}

/** Wraps an already running server; `close()` stops it. */
export function harnessFor(server: TestServer): ProcessHarness {
  const harness = harnessOver({
    url: server.url,
    adminToken: server.adminToken,
    fetch: (input, init) => fetch(input, init),
    close: () => server.stop(),
  });
  return { ...harness, server };
}

/**
 * Starts `main.ts` with `PASSKEY_ORIGINS` set to {@link PASSKEY_ORIGIN}
 * (overridable through `options.env`) on `options.store` (default a new temp
 * file).
 */
export async function startProcess(options: ProcessOptions = {}): Promise<ProcessHarness> {
  const { store, env, ...start } = options;
  const server = await startServer({
    ...start,
    kvPath: store === undefined ? undefined : kvPathOf(store),
    env: { PASSKEY_ORIGINS: PASSKEY_ORIGIN, ...env },
  });
  return harnessFor(server);
}

/** Runs `fn` on a fresh server process and always stops it afterwards. */
export function withProcess(
  options: ProcessOptions,
  fn: (h: ProcessHarness) => Promise<void>,
): Promise<void> {
  return runWith(startProcess(options), fn);
}
