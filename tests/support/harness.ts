/**
 * The one test harness: the service with an admin client and the calls the
 * suites make on it, in two implementations with the same interface.
 *
 * - In process (`startApp`, `withApp` in `in_process.ts`): the whole app
 *   from `createApp`, as `main.ts` builds it, called directly; no port, no
 *   process. For everything a request and its answer show.
 * - A process (`startProcess`, `withProcess` in `process.ts`): the real
 *   `main.ts` on a free port. For what needs one: real sockets (slow
 *   clients, HTTP/1.1 edges, event streams held open), signals, crashes,
 *   restarts, two processes on one store, the request log on stdout.
 *
 * Both take an options object whose `store` says where the data is kept: a
 * KV path (`":memory:"`, a file, a KV Connect URL) or a `TestStore` from
 * `stores.ts`.
 * @module
 */

import assert from "node:assert/strict";
import { IntentsClient } from "../../client/mod.ts";
import type { TestStore } from "./stores.ts";

/** The origin the software passkey signs for by default; every harness accepts it. */
export const PASSKEY_ORIGIN = "http://localhost:8000";

/** Where a harness keeps its data: a KV path or URL, or a store of `stores.ts`. */
export type StoreChoice = string | TestStore;

/** What both implementations take. */
export interface HarnessOptions {
  /** Environment as `readSettings` reads it (`PASSKEY_ORIGINS` defaults to {@link PASSKEY_ORIGIN}). */
  env?: Record<string, string>;
  /** Where the data is kept; default `:memory:` in process, a new temp file for a process. */
  store?: StoreChoice;
}

/** The service under test and the calls the suites make on it. */
export interface Harness {
  /** The base URL: the server's, or the made-up origin the app is called on. */
  url: string;
  adminToken: string;
  /** `Authorization` header value with the admin token. */
  auth: string;
  /** A client holding the admin token. */
  client: IntentsClient;
  /** A client of this service holding `token`, or none. */
  clientWith(token?: string): IntentsClient;
  /** A request for `path` (starting with `/`). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** `POST /intents` with `Content-Type: application/json`; objects are sent as `JSON.stringify`. */
  submit(body: unknown, headers?: HeadersInit): Promise<Response>;
  /** Adds a fresh template and returns its id. */
  newTemplate(): Promise<string>;
  /** Adds a fresh policy and returns its id. */
  newPolicy(): Promise<string>;
  /** Stops the service and releases its store handles. */
  close(): Promise<void>;
}

/** The KV path of a store choice. */
export function kvPathOf(store: StoreChoice): string {
  return typeof store === "string" ? store : store.kvPath;
}

/** What a harness is built over: where the service is and how to reach it. */
export interface HarnessTarget {
  url: string;
  adminToken: string;
  /** A `fetch` of full URLs that reaches the service. */
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  close(): Promise<void>;
}

/** Builds the harness calls over a target; both implementations use it. */
export function harnessOver(target: HarnessTarget): Harness {
  const { url, adminToken } = target;
  const clientWith = (token?: string) => new IntentsClient({ url, token, fetch: target.fetch });
  const client = clientWith(adminToken);
  const fetchPath = (path: string, init?: RequestInit) => target.fetch(`${url}${path}`, init);
  let counter = 0;
  const newDocument = async (kind: "template" | "policy") => {
    const doc = JSON.stringify({ kind, n: ++counter, nonce: crypto.randomUUID() });
    const added = kind === "template" ? await client.addTemplate(doc) : await client.addPolicy(doc);
    assert.equal(added.created, true);
    return added.id;
  };
  return {
    url,
    adminToken,
    auth: `Bearer ${adminToken}`,
    client,
    clientWith,
    fetch: fetchPath,
    submit(body, headers) {
      const text = typeof body === "string" || body instanceof Uint8Array
        ? body as string | Uint8Array<ArrayBuffer>
        : JSON.stringify(body);
      const h = new Headers(headers);
      if (!h.has("content-type")) h.set("content-type", "application/json");
      return fetchPath("/intents", { method: "POST", headers: h, body: text });
    },
    newTemplate: () => newDocument("template"),
    newPolicy: () => newDocument("policy"),
    close: () => target.close(),
  };
}

/** Runs `fn` on a started harness and always closes it, so a failing test leaves nothing behind. */
export async function runWith<H extends Harness>(
  started: Promise<H>,
  fn: (h: H) => Promise<void>,
): Promise<void> {
  const h = await started;
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}
