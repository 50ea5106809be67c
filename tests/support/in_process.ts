/**
 * The harness in process: the service composed as `main.ts` composes it
 * (`composeService`: the store, the writer, the app, webhook deliveries, due
 * work, the metrics), its app called directly, with no server process and
 * no port. Verification runs on the calling thread, or on a pool of worker
 * threads when the options' `env` sets `VERIFY_WORKERS`.
 * @module
 */

import type { App } from "../../src/http/app.ts";
import type { RequestLogLine } from "../../src/http/request_log.ts";
import { readSettings } from "../../src/settings.ts";
import { composeService, type Service } from "../../src/service.ts";
import {
  type Harness,
  type HarnessOptions,
  harnessOver,
  kvPathOf,
  PASSKEY_ORIGIN,
  runWith,
} from "./harness.ts";
import { TEST_ADMIN_TOKEN, TEST_LIMITS_OFF } from "./server.ts";

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
  /**
   * False: webhook deliveries and due work do not start, for a test that
   * plays that part itself on the same store (as another process would);
   * default true.
   */
  background?: boolean;
}

/** The harness in process, and the app inside it. */
export interface AppHarness extends Harness {
  /** The composed service the app belongs to. */
  service: Service;
  app: App;
  /** The app's own KV handle. */
  kv: Deno.Kv;
  /** The app's handler as a `fetch` of full URLs, for clients given a `fetch` option. */
  handle(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  /** A request for `path` from the peer `address` (an IP address). */
  fetchFrom(address: string, path: string, init?: RequestInit): Promise<Response>;
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
  const service = composeService({
    kv,
    settings,
    now: options.now,
    limitClock: options.limitClock,
    log: options.log ?? (() => {}),
    // Only when asked: the default's count follows this machine's CPUs.
    verifyThreads: options.env?.VERIFY_WORKERS ? settings.verifyWorkers : 0,
    report: () => {},
  });
  await service.store.prepare();
  if (options.background ?? true) service.start();
  const { app } = service;
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
    close: async () => {
      await service.stop();
      kv.close();
    },
  });
  const origin = options.origin ?? "http://app.test";
  const fetchFrom = (address: string, path: string, init?: RequestInit) =>
    handleFrom(address, `${origin}${path}`, init);
  return { ...harness, service, app, kv, handle, fetchFrom };
}

/** Runs `fn` on a fresh in-process harness and closes it afterwards. */
export function withApp(
  options: AppOptions,
  fn: (h: AppHarness) => Promise<void>,
): Promise<void> {
  return runWith(startApp(options), fn);
}
