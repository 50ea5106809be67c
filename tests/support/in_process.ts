/**
 * The harness in process: the whole app built as `main.ts` builds it (a
 * `KvStore`, the group-commit writer, `createApp`), called directly, with no
 * server process and no port. Verification runs on the calling thread, or on
 * a pool of worker threads when the options' `env` sets `VERIFY_WORKERS`.
 * @module
 */

import { type App, createApp } from "../../src/http/app.ts";
import type { RequestLogLine } from "../../src/http/request_log.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { layoutFor } from "../../src/storage/write_layout.ts";
import { createWriter } from "../../src/storage/writer.ts";
import { readSettings } from "../../src/settings.ts";
import {
  type Harness,
  type HarnessOptions,
  harnessOver,
  kvPathOf,
  PASSKEY_ORIGIN,
  runWith,
} from "./harness.ts";
import { TEST_ADMIN_TOKEN, TEST_LIMITS_OFF } from "./server.ts";
import { type Verifier, VerifyPool } from "../../src/workers/verify_pool.ts";

/** Options of {@link startApp}. */
export interface AppOptions extends HarnessOptions {
  /** The origin requests are made on; default `http://app.test`. */
  origin?: string;
  /** The clock of the app and its store; default the system clock. */
  now?: () => Date;
  /** Receives each request's log line; default: discarded. */
  log?: (line: RequestLogLine) => void;
  /** The peer address every request comes from, as `Deno.serve` reports it; default `127.0.0.1`. */
  peer?: string;
  /** The rate limits' clock in milliseconds; default `performance.now`. */
  limitClock?: () => number;
}

/** The harness in process, and the app inside it. */
export interface AppHarness extends Harness {
  app: App;
  /** The app's own KV handle. */
  kv: Deno.Kv;
  /** The app's handler as a `fetch` of full URLs, for clients given a `fetch` option. */
  handle(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  /** A request for `path` from the peer `address` (an IP address). */
  fetchFrom(address: string, path: string, init?: RequestInit): Promise<Response>;
}

/** True for a KV path that names a local file (not `:memory:`, not a KV Connect URL). */
function isFilePath(path: string): boolean {
  return path !== ":memory:" && !/^https?:\/\//.test(path);
}

/** The byte length of a body whose length a client knows before sending it. */
function knownLength(body: BodyInit | null | undefined): number | undefined {
  if (typeof body === "string") return new TextEncoder().encode(body).length;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return body.byteLength;
  if (body instanceof Blob) return body.size;
  return undefined;
}

/**
 * Builds the app on a fresh `:memory:` KV (or `options.store`) and returns
 * its harness; `close()` closes the KV handles it opened.
 */
export async function startApp(options: AppOptions = {}): Promise<AppHarness> {
  const kvPath = kvPathOf(options.store ?? ":memory:");
  const settings = readSettings({
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    PASSKEY_ORIGINS: PASSKEY_ORIGIN,
    ...TEST_LIMITS_OFF,
    ...options.env,
  });
  const kv = await Deno.openKv(kvPath);
  // As main.ts: on a local file a second handle reads ids ahead of their commits.
  const readKv = isFilePath(kvPath) ? await Deno.openKv(kvPath) : undefined;
  const now = options.now ?? (() => new Date());
  // As main.ts begins an empty store: the head layout on a file, the staged one elsewhere.
  const beginLayout = layoutFor(kvPath, false);
  const store = new KvStore(kv, { now, readKv, beginLayout });
  // Only when asked: the default's count follows this machine's CPUs.
  const threads = options.env?.VERIFY_WORKERS ? settings.verifyWorkers : 0;
  let pool: Verifier | undefined;
  const app = createApp({
    store,
    settings,
    writer: createWriter(store, { batchMax: settings.commitBatchMax }),
    now,
    log: options.log ?? (() => {}),
    limitClock: options.limitClock,
    verifier: threads === 0
      ? undefined
      : (ctx) =>
        pool = new VerifyPool(threads, ctx, { workCharged: settings.limits.ratePerAddress > 0 }),
  });
  const handleFrom = (peer: string, input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    // An HTTP client declares the length of a body it holds whole, as the server then sees.
    const length = knownLength(init?.body);
    if (length !== undefined && !request.headers.has("content-length")) {
      request.headers.set("content-length", String(length));
    }
    return app.handler(request, { remoteAddr: { transport: "tcp", hostname: peer, port: 40000 } });
  };
  const handle = (input: RequestInfo | URL, init?: RequestInit) =>
    handleFrom(options.peer ?? "127.0.0.1", input, init);
  const harness = harnessOver({
    url: options.origin ?? "http://app.test",
    adminToken: settings.adminToken,
    fetch: handle,
    close: () => {
      pool?.close();
      readKv?.close();
      kv.close();
      return Promise.resolve();
    },
  });
  const origin = options.origin ?? "http://app.test";
  const fetchFrom = (address: string, path: string, init?: RequestInit) =>
    handleFrom(address, `${origin}${path}`, init);
  return { ...harness, app, kv, handle, fetchFrom };
}

/** Runs `fn` on a fresh in-process harness and closes it afterwards. */
export function withApp(
  options: AppOptions,
  fn: (h: AppHarness) => Promise<void>,
): Promise<void> {
  return runWith(startApp(options), fn);
}
