/**
 * The whole app in-process on a `:memory:` KV, for tests that call its
 * handler directly (no server process, no port).
 * @module
 */

import { type App, type AppDeps, createApp } from "../../src/http/app.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { readSettings } from "../../src/settings.ts";

/** What {@link withInProcessApp} hands the test. */
export interface InProcessApp {
  app: App;
  /** Calls the handler with a request for `path` on a made-up origin. */
  call: (path: string, init?: RequestInit) => Promise<Response>;
  /** The handler as a `fetch`, for clients given a `fetch` option. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

/**
 * Builds the app from `env` (as `readSettings` reads it) on a fresh
 * `:memory:` KV, with the request log discarded, runs `fn`, and closes the KV.
 *
 * @param deps further dependencies of `createApp` (e.g. `now`).
 */
export async function withInProcessApp(
  env: Record<string, string>,
  fn: (service: InProcessApp) => Promise<void>,
  deps: Omit<AppDeps, "store" | "settings"> = {},
  origin = "http://service.test",
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    const app = createApp({
      store: new KvStore(kv),
      settings: readSettings(env),
      log: () => {},
      ...deps,
    });
    await fn({
      app,
      call: (path, init) => app.handler(new Request(`${origin}${path}`, init)),
      fetch: (input, init) => app.handler(new Request(input, init)),
    });
  } finally {
    kv.close();
  }
}
