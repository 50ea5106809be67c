/**
 * Shared helpers of the end-to-end tests: a running server with an admin
 * client, documents to reference, signed bodies built with the client library
 * and the software passkey, and one assertion for the `{message, code}` error
 * body.
 * @module
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  type Ed25519Key,
  type Intent,
  IntentsClient,
  type PasskeySignature,
  passkeySignature,
  type Payload,
  signedBytes,
} from "../../client/mod.ts";
import { type AssertOptions, SoftwarePasskey } from "./authenticator.ts";
import { type StartOptions, startServer, type TestServer } from "./server.ts";

export { SoftwarePasskey };

/** The origin the software passkey signs for by default; servers here accept it. */
export const PASSKEY_ORIGIN = "http://localhost:8000";

/** A running server plus the helpers the tests call on it. */
export interface Harness {
  server: TestServer;
  url: string;
  /** A client holding the admin token. */
  client: IntentsClient;
  /** `Authorization` header value with the admin token. */
  auth: string;
  /** A `fetch` against the server; `path` starts with `/`. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** `POST /intents` with `Content-Type: application/json`; objects are sent as `JSON.stringify`. */
  submit(body: unknown, headers?: HeadersInit): Promise<Response>;
  /** Adds a fresh template and returns its id. */
  newTemplate(): Promise<string>;
  /** Adds a fresh policy and returns its id. */
  newPolicy(): Promise<string>;
}

/**
 * Starts the real server with `PASSKEY_ORIGINS` set to {@link PASSKEY_ORIGIN}
 * (overridable through `options.env`).
 */
export async function startHarness(options: StartOptions = {}): Promise<Harness> {
  const server = await startServer({
    ...options,
    env: { PASSKEY_ORIGINS: PASSKEY_ORIGIN, ...options.env },
  });
  return harnessFor(server);
}

/** Wraps an already running server. */
export function harnessFor(server: TestServer): Harness {
  const auth = `Bearer ${server.adminToken}`;
  const client = new IntentsClient({ url: server.url, token: server.adminToken });
  const doFetch = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, init);
  let counter = 0;
  const newDocument = async (kind: "template" | "policy") => {
    const doc = JSON.stringify({ kind, n: ++counter, nonce: crypto.randomUUID() });
    const added = kind === "template" ? await client.addTemplate(doc) : await client.addPolicy(doc);
    assert.equal(added.created, true);
    return added.id;
  };
  return {
    server,
    url: server.url,
    client,
    auth,
    fetch: doFetch,
    submit(body, headers) {
      const text = typeof body === "string" || body instanceof Uint8Array
        ? body as string | Uint8Array<ArrayBuffer>
        : JSON.stringify(body);
      const h = new Headers(headers);
      if (!h.has("content-type")) h.set("content-type", "application/json");
      return doFetch("/intents", { method: "POST", headers: h, body: text });
    },
    newTemplate: () => newDocument("template"),
    newPolicy: () => newDocument("policy"),
  };
}

/**
 * Runs `fn` with a fresh harness and always stops the server afterwards, so a
 * failing test never leaves a process behind.
 */
export async function withHarness(
  options: StartOptions,
  fn: (h: Harness) => Promise<void>,
): Promise<void> {
  const h = await startHarness(options);
  try {
    await fn(h);
  } finally {
    await h.server.stop();
  }
}

/** A Variant A payload with a fresh id. */
export function newPayload(templateId: string, extra: Partial<Payload> = {}): Payload {
  return { id: `intent-${crypto.randomUUID()}`, template_id: templateId, ...extra };
}

/** A Variant B intent with a fresh UUID. */
export function newIntent(policyId: string, extra: Partial<Intent> = {}): Intent {
  return { id: crypto.randomUUID(), policy_id: policyId, ...extra };
}

/**
 * A `Passkey` signature over `value` from the software authenticator,
 * assembled by the client library's {@link passkeySignature} from the raw
 * assertion bytes, as a browser integration would.
 */
export async function passkeySig(
  passkey: SoftwarePasskey,
  value: Payload | Intent,
  options: AssertOptions = {},
): Promise<PasskeySignature> {
  const body = await passkey.assert(signedBytes(value), options);
  return passkeySignature({
    authenticatorData: base58.decode(body.authenticator_data),
    clientDataJSON: new TextEncoder().encode(body.client_data),
    signature: base58.decode(body.signature),
    publicKey: base58.decode(body.pub_key),
  });
}

/** The base58 public key of an Ed25519 key pair. */
export function keyText(key: Ed25519Key): string {
  return base58.encode(key.publicKey);
}

/** What {@link expectError} checks beyond status and code. */
export interface ExpectErrorOptions {
  /** Text the message must contain, e.g. the field path. */
  mentions?: string | string[];
  /** Input the message must not echo. */
  notEcho?: string | string[];
}

/**
 * Asserts an error answer: the status, `Content-Type: application/json`, a
 * body of exactly `{message, code}` with a string message, and the code.
 *
 * @returns the message, for further checks.
 */
export async function expectError(
  response: Response,
  status: number,
  code: string,
  options: ExpectErrorOptions = {},
): Promise<string> {
  const text = await response.text();
  assert.equal(response.status, status, `status ${response.status}, body ${text}`);
  const type = response.headers.get("content-type") ?? "";
  assert.equal(type.split(";")[0].trim(), "application/json");
  const body = JSON.parse(text);
  assert.deepEqual(Object.keys(body).sort(), ["code", "message"], text);
  assert.equal(typeof body.message, "string");
  assert.ok(body.message.length > 0);
  assert.equal(body.code, code, `code ${body.code}: ${body.message}`);
  for (const m of [options.mentions ?? []].flat()) {
    assert.ok(body.message.includes(m), `message "${body.message}" should mention "${m}"`);
  }
  for (const e of [options.notEcho ?? []].flat()) {
    assert.ok(!body.message.includes(e), `message "${body.message}" echoes the input`);
  }
  return body.message;
}

/** Reads a 201 answer's record, checking status and `Location`. */
export async function expectCreated(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  assert.equal(response.status, 201, text);
  assert.equal(response.headers.get("content-type")?.split(";")[0], "application/json");
  const record = JSON.parse(text);
  assert.equal(response.headers.get("location"), `/intents/${encodeURIComponent(record.id)}`);
  return record;
}

/** The content address of a document: base58 of SHA-256 of its exact bytes. */
export async function contentAddress(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return base58.encode(new Uint8Array(digest));
}
