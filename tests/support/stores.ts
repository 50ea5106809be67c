/**
 * The stores the suites that matter run on, one suite for both: a local KV
 * file, and a KV Connect server (denokv's own SQLite backend behind the KV
 * Connect protocol, with denokv's limits), as a self-hosted denokv or the
 * managed KV of Deno Deploy are reached.
 *
 * The KV Connect server needs denokv's backend, an npm package that exists
 * for linux-x64 only. Where it is missing, the tests that need the server are
 * ignored with a printed reason, except with `CI` set on linux-x64, where the
 * backend belongs: there they run, and fail saying what is missing.
 * @module
 */

import { dirname } from "node:path";
import { BACKEND_PLATFORM, locateBackend, thisPlatform } from "../../testing/kv_connect/backend.ts";
import { startKvConnectServer } from "../../testing/kv_connect/start.ts";
import { startDelayProxy } from "../../testing/delay_proxy.ts";
import { tempKvPath } from "./server.ts";

/** Which store: a KV file, or a KV Connect URL. */
export type StoreKind = "file" | "kv_connect";

/** Every kind, in the order tests are registered. */
export const STORE_KINDS: readonly StoreKind[] = ["file", "kv_connect"];

/**
 * The access token of every KV Connect server the tests start. It is set in
 * this process's environment, which the server processes inherit, so that
 * `Deno.openKv(url)` works here and there.
 */
export const KV_CONNECT_TOKEN = "kv-connect-test-token-0123456789";

const backend = await locateBackend();

/** Why a KV Connect server cannot start here, or null when it can. */
export const KV_CONNECT_MISSING: string | null = "missing" in backend ? backend.missing : null;

/**
 * Whether the tests that need a KV Connect server are ignored: when the
 * backend is `missing` (why, or null when found), unless `ci` is set on the
 * backend's own platform, where they run and fail.
 */
export function ignoresKvConnect(
  { missing, ci, platform }: { missing: string | null; ci: boolean; platform: string },
): boolean {
  return missing !== null && !(ci && platform === BACKEND_PLATFORM);
}

const kvConnectIgnored = ignoresKvConnect({
  missing: KV_CONNECT_MISSING,
  ci: Boolean(Deno.env.get("CI")),
  platform: thisPlatform(),
});

let warned = false;

/**
 * Options for `Deno.test` of a test that needs a KV Connect server: the test
 * is ignored, with a printed reason, where the server cannot start (see the
 * module's documentation).
 */
export function needsKvConnect(): { ignore: boolean } {
  if (kvConnectIgnored && !warned) {
    warned = true;
    console.warn(`KV Connect tests ignored: ${KV_CONNECT_MISSING}`);
  }
  return { ignore: kvConnectIgnored };
}

/** A store for one test: its app in process or its servers (a harness's `store` option). */
export interface TestStore {
  kind: StoreKind;
  /** `KV_PATH`: a file path or a KV Connect URL. */
  kvPath: string;
  /** A handle of the test's own, e.g. to audit what the servers stored; the caller closes it. */
  open(): Promise<Deno.Kv>;
  /** Removes the store: its file, or its KV Connect server and that server's file. */
  close(): Promise<void>;
}

/**
 * Starts an empty store of `kind`. `loseAnswers` (KV Connect only) loses the
 * answer of every Nth atomic write after applying it, as a cut connection
 * does; Deno's client then sends the write again. `delayMs` (KV Connect
 * only) puts the server behind a link that holds every chunk that long each
 * way (`testing/delay_proxy.ts`).
 */
export async function newTestStore(
  kind: StoreKind,
  options: { loseAnswers?: number; delayMs?: number } = {},
): Promise<TestStore> {
  if (kind === "file") {
    const kvPath = await tempKvPath();
    return {
      kind,
      kvPath,
      open: () => Deno.openKv(kvPath),
      close: () => Deno.remove(dirname(kvPath), { recursive: true }).catch(() => {}),
    };
  }
  if (KV_CONNECT_MISSING !== null) throw new Error(`no KV Connect server: ${KV_CONNECT_MISSING}`);
  Deno.env.set("DENO_KV_ACCESS_TOKEN", KV_CONNECT_TOKEN);
  const server = await startKvConnectServer({
    token: KV_CONNECT_TOKEN,
    loseAnswers: options.loseAnswers,
  });
  // Behind a link of that delay each way, as the KV is over a network.
  const proxy = options.delayMs
    ? await startDelayProxy({ target: server.url, delayMs: options.delayMs })
    : undefined;
  const url = proxy?.url ?? server.url;
  return {
    kind,
    kvPath: url,
    open: () => Deno.openKv(url),
    close: async () => {
      await proxy?.close();
      await server.close();
      await Deno.remove(dirname(server.path), { recursive: true }).catch(() => {});
    },
  };
}

const LABEL: Record<StoreKind, string> = { file: "KV file", kv_connect: "KV Connect" };

/**
 * Registers `fn` as one test per store kind, each named `name` with its
 * store ("… [KV file]", "… [KV Connect]"), each with a fresh store that is
 * removed afterwards; `fn` gets the test's context too, for steps. The KV
 * Connect one is ignored where a KV Connect server cannot start
 * ({@link needsKvConnect}).
 */
export function storeTest(
  name: string,
  fn: (store: TestStore, t: Deno.TestContext) => Promise<void>,
  options: Omit<Deno.TestDefinition, "name" | "fn"> = {},
): void {
  for (const kind of STORE_KINDS) {
    Deno.test({
      ...options,
      ignore: options.ignore || (kind === "kv_connect" && needsKvConnect().ignore),
      name: `${name} [${LABEL[kind]}]`,
      fn: async (t) => {
        const store = await newTestStore(kind);
        try {
          await fn(store, t);
        } finally {
          await store.close();
        }
      },
    });
  }
}
