/**
 * What the suites share besides the harness (`harness.ts`): intents to
 * submit, signatures built with the client library and the software passkey,
 * the assertions for the `{message, code}` error body and a 201, and the
 * admin calls several suites make (listing intents, the configuration).
 * @module
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  type Ed25519Key,
  type Intent,
  type IntentRecord,
  type IntentsClient,
  type PasskeySignature,
  passkeySignature,
  type Payload,
  signedBytes,
  signVariantB,
} from "../../client/mod.ts";
import { type AssertOptions, SoftwarePasskey } from "../../testing/software_passkey.ts";
import type { Harness } from "./harness.ts";

export { SoftwarePasskey };

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

/** `GET /intents` (admin) with `query`, e.g. `?limit=5`. */
export function listIntents(h: Harness, query = ""): Promise<Response> {
  return h.fetch(`/intents${query}`, { headers: { authorization: h.auth } });
}

/** Every page of `GET /intents` at `limit`, following the cursor to its end. */
export async function listPages(h: Harness, limit: number): Promise<IntentRecord[][]> {
  const pages: IntentRecord[][] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const res = await listIntents(h, query);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["cursor", "items"]);
    assert.ok(body.cursor === null || typeof body.cursor === "string");
    pages.push(body.items);
    cursor = body.cursor;
    assert.ok(pages.length < 100, "the cursor never ends");
  } while (cursor !== null);
  return pages;
}

/** `PUT /config` (admin) with `body` as JSON. */
export function putConfig(
  h: Harness,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return h.fetch("/config", {
    method: "PUT",
    headers: { authorization: h.auth, "content-type": "application/json", ...headers },
    body,
  });
}

/** `GET /config` (admin). */
export function getConfig(h: Harness): Promise<Response> {
  return h.fetch("/config", { headers: { authorization: h.auth } });
}

/** Submits `n` fresh Variant B intents under `policyId`, signed by `key`; returns their ids. */
export async function submitIntents(
  client: IntentsClient,
  options: { policyId: string; n: number; key: Ed25519Key },
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < options.n; i++) {
    const record = await client.submit(signVariantB(newIntent(options.policyId), options.key));
    ids.push(record.id);
  }
  return ids;
}

/** A stream that sends `total` bytes of `{"a":"xxxx…` in chunks, with no Content-Length. */
export function streamOf(total: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(512, total - sent);
      const chunk = new Uint8Array(n).fill(0x78);
      if (sent === 0) chunk.set(new TextEncoder().encode('{"a":"'));
      sent += n;
      controller.enqueue(chunk);
    },
  });
}
