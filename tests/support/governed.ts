/**
 * What the end-to-end tests of governed documents and approvals (docs/interface.md
 * §10) share: signers of both kinds that sign a payload or intent, governed
 * documents, bodies under them, the approvals routes, the record's
 * `approval` member, and reading the feed.
 * @module
 */

import assert from "node:assert/strict";
import {
  type Ed25519Key,
  type Ed25519Signature,
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  type PasskeySignature,
  type Payload,
  rejectionBytes,
  type Signature,
  signedBytes,
} from "../../client/mod.ts";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58, base64urlnopad } from "@scure/base";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";
import { expectError, keyText, passkeySig } from "./fixtures.ts";
import type { Harness } from "./harness.ts";
import { compressed, randomizedEd25519Signature } from "./keys.ts";
import type { Json } from "./record.ts";

/** One key holder of a governed document. */
export interface Signer<
  S extends Ed25519Signature | PasskeySignature = Ed25519Signature | PasskeySignature,
> {
  /** The key as documents name it (base58). */
  key: string;
  kind: "Ed25519" | "Passkey";
  /** An `Ed25519` or `Passkey` signature over `value`'s signed bytes (the same each time). */
  sign(value: Payload | Intent): Promise<S>;
  /** A signature over `value`'s rejection bytes (the same each time). */
  reject(value: Payload | Intent): Promise<S>;
  /** Another valid signature over `bytes` than the one it made before (a new nonce or count). */
  signBytesAgain(bytes: Uint8Array): Promise<S>;
}

/** An Ed25519 signer, with its key pair. */
export function ed25519Signer(pair: Ed25519Key = generateEd25519Key()): Signer<Ed25519Signature> & {
  pair: Ed25519Key;
} {
  const member = (signature: Uint8Array): Ed25519Signature => ({
    Ed25519: { pub_key: keyText(pair), signature: base58.encode(signature) },
  });
  return {
    key: keyText(pair),
    kind: "Ed25519",
    pair,
    sign: (value) => Promise.resolve(ed25519Signature(value, pair)),
    reject: (value) => Promise.resolve(member(ed25519.sign(rejectionBytes(value), pair.secretKey))),
    signBytesAgain: (bytes) =>
      Promise.resolve(member(randomizedEd25519Signature(pair.secretKey, bytes))),
  };
}

/**
 * A passkey signer held by the software authenticator. With `compressed`, the
 * document names its key in compressed form while its assertions carry the
 * uncompressed point, as browsers send it.
 */
export async function passkeySigner(
  options: { compressed?: boolean } = {},
): Promise<Signer<PasskeySignature> & { passkey: SoftwarePasskey }> {
  const passkey = await SoftwarePasskey.create();
  let count = 0;
  const member = async (bytes: Uint8Array, signCount = 0): Promise<PasskeySignature> => ({
    Passkey: await passkey.assert(bytes, { signCount }),
  });
  return {
    key: options.compressed ? compressed(passkey) : base58.encode(passkey.publicKey),
    kind: "Passkey",
    passkey,
    sign: (value) => passkeySig(passkey, value),
    reject: (value) => member(rejectionBytes(value)),
    signBytesAgain: (bytes) => member(bytes, ++count),
  };
}

/** The `authorization` member naming `signers` (weight 1 each unless `weights` says). */
export function authorizationOf(
  signers: readonly Signer[],
  threshold: number,
  extra: Json & { weights?: number[] } = {},
): Json {
  const { weights, ...rest } = extra;
  return {
    signers: Object.fromEntries(signers.map((s, i) => [s.key, weights?.[i] ?? 1])),
    threshold,
    ...rest,
  };
}

/** Which document a governed intent references: a template (Variant A) or a policy (Variant B). */
export type DocKind = "template" | "policy";

/** `POST /templates` or `/policies` with the admin token. */
export function postDocument(
  h: Harness,
  kind: DocKind,
  text: string | Uint8Array,
  contentType = "application/json",
): Promise<Response> {
  return h.fetch(kind === "template" ? "/templates" : "/policies", {
    method: "POST",
    headers: { authorization: h.auth, "content-type": contentType },
    body: text as BodyInit,
  });
}

/** Stores a governed document (a fresh one: it carries a nonce) and returns its id. */
export async function addGoverned(h: Harness, kind: DocKind, authorization: Json): Promise<string> {
  const text = JSON.stringify({ rules: `${kind} ${crypto.randomUUID()}`, authorization });
  const response = await postDocument(h, kind, text);
  const body = await response.json();
  assert.equal(response.status, 201, JSON.stringify(body));
  return body.id;
}

/** A fresh payload (template) or intent (policy) under document `docId`. */
export function newSigned(kind: DocKind, docId: string, extra: Json = {}): Payload | Intent {
  return kind === "template"
    ? { id: `gov-${crypto.randomUUID()}`, template_id: docId, ...extra }
    : { id: crypto.randomUUID(), policy_id: docId, ...extra };
}

/** The `POST /intents` body of `signed` with `signature` (or `Unsigned`, Variant B only). */
export function bodyOf(signed: Payload | Intent, signature: Signature | "Unsigned"): Json {
  if ("template_id" in signed) return { payload: signed, signature };
  return {
    authorship: signature === "Unsigned" ? "Unsigned" : { Signed: signature },
    intent: signed,
  };
}

/** `GET /intents/{id}/approvals` (public). */
export function getApprovals(h: Harness, id: string): Promise<Response> {
  return h.fetch(`/intents/${id}/approvals`);
}

/** `POST /intents/{id}/approvals` (public); objects are sent as `JSON.stringify`. */
export function postApproval(
  h: Harness,
  id: string,
  body: unknown,
  contentType = "application/json",
): Promise<Response> {
  return h.fetch(`/intents/${id}/approvals`, {
    method: "POST",
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** `POST /intents/{id}/rejections` (public); objects are sent as `JSON.stringify`. */
export function postRejection(
  h: Harness,
  id: string,
  body: unknown,
  contentType = "application/json",
): Promise<Response> {
  return h.fetch(`/intents/${id}/rejections`, {
    method: "POST",
    headers: { "content-type": contentType },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/**
 * The edge's order on a decision route (`post`: {@link postApproval} or
 * {@link postRejection}) for each of `ids`: a media type other than JSON is
 * 415 whatever the body, even one past `MAX_BODY_BYTES` (32768) that is not
 * JSON past its start; that body sent as JSON is 413.
 *
 * @param good a valid decision's body, as sent.
 */
export async function expectMediaTypeThenSize(
  post: (id: string, body: string, contentType?: string) => Promise<Response>,
  ids: readonly string[],
  good: string,
): Promise<void> {
  const huge = `{"signature":${" ".repeat(40_000)}`;
  for (const id of ids) {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      for (const sent of [good, huge]) {
        await expectError(await post(id, sent, type), 415, "unsupported_media_type");
      }
    }
    await expectError(await post(id, huge), 413, "payload_too_large");
  }
}

/** Rejects with `signer` and returns the 200 view. */
export async function reject(
  h: Harness,
  id: string,
  signed: Payload | Intent,
  signer: Signer,
): Promise<Json> {
  const response = await postRejection(h, id, { signature: await signer.reject(signed) });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

/** Approves with `signer` and returns the 200 view. */
export async function approve(
  h: Harness,
  id: string,
  signed: Payload | Intent,
  signer: Signer,
): Promise<Json> {
  const response = await postApproval(h, id, { signature: await signer.sign(signed) });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

/** `GET /intents/{id}` (admin): the record. */
export async function getRecord(h: Harness, id: string): Promise<Json> {
  const response = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

/** Asserts a refusal that must not have taken the id: the id stays unknown. */
export async function expectIdFree(h: Harness, id: string): Promise<void> {
  const response = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
  await expectError(response, 404, "not_found");
}

/** What {@link expectApproval} expects of a record's or view's `approval`. */
export interface ExpectedApproval {
  threshold: number;
  signers: Record<string, number>;
  /** Who approved, in order: the document's key text and the kind. */
  approvals: { key: string; kind: string }[];
  /** Who rejected, in order (default none). */
  rejections?: { key: string; kind: string }[];
  /** Seconds from `received_at` to `expires_at`. */
  windowS: number;
  receivedAt: string;
}

/**
 * Checks an `approval` member exactly: its members, the weight as the sum of
 * the approvers' weights, each approval's time (the first ones at
 * `received_at`, never before it, in order) and `expires_at`.
 */
export function expectApproval(
  approval: unknown,
  expected: ExpectedApproval,
  submitted = 1,
): void {
  const a = approval as Json & { approvals: Json[] };
  assert.deepEqual(Object.keys(a).sort(), [
    "approvals",
    "expires_at",
    "rejections",
    "signers",
    "threshold",
    "weight",
  ]);
  assert.equal(a.threshold, expected.threshold);
  assert.deepEqual(a.signers, expected.signers);
  const weight = expected.approvals.reduce((sum, x) => sum + expected.signers[x.key], 0);
  assert.equal(a.weight, weight);
  assert.deepEqual(a.approvals.map(({ key, kind }) => ({ key, kind })), expected.approvals);
  const rejections = a.rejections as Json[];
  assert.deepEqual(
    rejections.map(({ key, kind }) => ({ key, kind })),
    expected.rejections ?? [],
  );
  for (const entry of rejections) {
    assert.deepEqual(Object.keys(entry).sort(), ["at", "key", "kind"]);
    assert.ok(Date.parse(entry.at as string) >= Date.parse(expected.receivedAt));
  }
  let last = Date.parse(expected.receivedAt);
  a.approvals.forEach((entry, i) => {
    assert.deepEqual(Object.keys(entry).sort(), ["at", "key", "kind"]);
    // The submission's signatures are approvals made when it was received.
    if (i < submitted) assert.equal(entry.at, expected.receivedAt);
    assert.ok(Date.parse(entry.at as string) >= last, `approval ${i} is out of order`);
    last = Date.parse(entry.at as string);
  });
  assert.equal(
    a.expires_at,
    new Date(Date.parse(expected.receivedAt) + expected.windowS * 1000).toISOString(),
  );
}

/** What {@link expectGoverned} expects of a governed intent's record. */
export interface ExpectedGoverned {
  status: 201 | 202;
  state: "accepted" | "pending";
  /** The authorship as submitted: its kind and the keys that signed. */
  kind: string;
  authors: string[];
  approval: Omit<ExpectedApproval, "receivedAt">;
}

/**
 * Checks the answer to a submission under a governed document: the status,
 * `Location`, the record's exact members (docs/interface.md §4, §10), and that
 * `GET /intents/{id}` returns the same record.
 *
 * @returns the record.
 */
export async function expectGoverned(
  h: Harness,
  response: Response,
  sent: Json,
  expected: ExpectedGoverned,
): Promise<Json> {
  const text = await response.text();
  assert.equal(response.status, expected.status, text);
  assert.equal(response.headers.get("content-type")?.split(";")[0], "application/json");
  const record = JSON.parse(text);
  assert.equal(response.headers.get("location"), `/intents/${encodeURIComponent(record.id)}`);
  const variantA = "payload" in sent;
  const inner = (variantA ? sent.payload : sent.intent) as Json;
  const ref = variantA ? "template_id" : "policy_id";
  const members = ["id", "variant", ref, "authorship", "received_at", "state", "approval"];
  if (inner.attrs !== undefined) members.push("attrs");
  assert.deepEqual(Object.keys(record).sort(), [...members, "request"].sort());
  assert.equal(record.id, (inner.id as string).toLowerCase());
  assert.equal(record.variant, variantA ? "A" : "B");
  assert.equal(record[ref], inner[ref]);
  if (inner.attrs !== undefined) assert.deepEqual(record.attrs, inner.attrs);
  assert.deepEqual(record.authorship, { kind: expected.kind, signers: expected.authors });
  assert.match(record.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(Math.abs(Date.parse(record.received_at) - Date.now()) < 60_000);
  assert.equal(record.state, expected.state);
  expectApproval(record.approval, { ...expected.approval, receivedAt: record.received_at }, 16);
  assert.deepEqual(record.request, sent);
  assert.deepEqual(await getRecord(h, record.id), record);
  return record;
}

/** The `challenge` of an approvals view: base64url without padding of SHA-256(JCS(signed)). */
export async function challengeOf(signed: Payload | Intent): Promise<string> {
  const bytes = signedBytes(signed) as Uint8Array<ArrayBuffer>;
  return base64urlnopad.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/**
 * The `reject_challenge` of an approvals view: base64url without padding of
 * SHA-256 of `intents:reject:` followed by JCS(signed).
 */
export async function rejectChallengeOf(signed: Payload | Intent): Promise<string> {
  const bytes = new TextEncoder().encode(
    `intents:reject:${new TextDecoder().decode(signedBytes(signed))}`,
  );
  return base64urlnopad.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** One feed event as the pull form returns it. */
export interface FeedEvent {
  id: string;
  type: string;
  record: Json & { id: string; state: string; approval?: Json & { weight: number } };
}

/** Reads the whole feed after `after` (or from its start) through the pull form. */
export async function readFeed(
  url: string,
  token: string,
  after: string | null = null,
): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (;;) {
    const query = after === null ? "?limit=1000" : `?after=${after}&limit=1000`;
    const response = await fetch(`${url}/events${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 200);
    const page = await response.json();
    events.push(...page.events);
    if (page.events.length === 0) return events;
    after = page.next;
  }
}

/** The id of the feed's last event, or null while it is empty: where a reader starts. */
export async function feedEnd(url: string, token: string): Promise<string | null> {
  const events = await readFeed(url, token);
  return events.length === 0 ? null : events[events.length - 1].id;
}

/**
 * Long-polls the feed after `after` until an event satisfies `match`, or
 * `timeoutMs` passes.
 *
 * @returns the event and the time it was read, or null on timeout.
 */
export async function awaitEvent(
  url: string,
  token: string,
  after: string | null,
  match: (event: FeedEvent) => boolean,
  timeoutMs: number,
): Promise<{ event: FeedEvent; seenAt: number } | null> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const wait = Math.max(1, Math.min(30, Math.ceil((end - Date.now()) / 1000)));
    const query = after === null ? `?wait=${wait}` : `?after=${after}&wait=${wait}`;
    const response = await fetch(`${url}/events${query}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(response.status, 200);
    const page = await response.json();
    const seenAt = Date.now();
    for (const event of page.events as FeedEvent[]) {
      if (match(event)) return { event, seenAt };
    }
    after = page.next;
  }
  return null;
}
