/**
 * How the store writes its templates, policies, runtime configuration,
 * leases (the feed mover's and each webhook endpoint's), webhook endpoints
 * and their attempts: bytes only, as `codec.ts` says why. Each layout is documented beside its
 * key in `keys.ts`; the decoders also take what an earlier version wrote
 * (plain JavaScript values), which `deno task store-upgrade` rewrites.
 * @module
 */

import type { StoredConfig, StoredDocument } from "../domain/intent.ts";
import type { AttemptRecord, Endpoint } from "../webhooks/endpoint.ts";
import { LayoutError } from "./codec.ts";

/** The first byte of a document value. */
const DOCUMENT_LAYOUT = 1;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Strict UTF-8: a value that is not is not one of ours. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * A document as stored: byte 0 is the layout (1), then a 16-bit big-endian
 * length and the content type's UTF-8 bytes, then the document's bytes.
 */
export function encodeDocument(doc: StoredDocument): Uint8Array {
  const type = encoder.encode(doc.contentType);
  const out = new Uint8Array(3 + type.byteLength + doc.bytes.byteLength);
  out[0] = DOCUMENT_LAYOUT;
  new DataView(out.buffer).setUint16(1, type.byteLength);
  out.set(type, 3);
  out.set(doc.bytes, 3 + type.byteLength);
  return out;
}

/** A stored document, or null when absent. */
export function decodeDocument(value: unknown): StoredDocument | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) {
    if (value.byteLength < 3 || value[0] !== DOCUMENT_LAYOUT) {
      throw new LayoutError("a document has an unknown layout");
    }
    const length = new DataView(value.buffer, value.byteOffset).getUint16(1);
    if (3 + length > value.byteLength) throw new LayoutError("a document has an unknown layout");
    return {
      contentType: decoder.decode(value.subarray(3, 3 + length)),
      bytes: value.subarray(3 + length),
    };
  }
  const doc = value as Partial<StoredDocument>;
  if (typeof doc.contentType === "string" && doc.bytes instanceof Uint8Array) {
    return { contentType: doc.contentType, bytes: doc.bytes };
  }
  throw new LayoutError("a document has an unknown layout");
}

/**
 * The JSON object a value holds.
 *
 * @throws {LayoutError} naming `what`, for a value that holds none.
 */
function json(value: unknown, what: string): Record<string, unknown> {
  if (!(value instanceof Uint8Array)) throw new LayoutError(`${what} is not bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictDecoder.decode(value));
  } catch {
    throw new LayoutError(`${what} is not UTF-8 JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new LayoutError(`${what} is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** A value as stored: UTF-8 JSON. */
const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));

/** The runtime configuration as stored: UTF-8 JSON. */
export function encodeConfig(config: StoredConfig): Uint8Array {
  const { evidence_extractor_url, updated_at } = config;
  return encodeJson({ evidence_extractor_url, updated_at });
}

/** The stored runtime configuration, or null when absent. */
export function decodeConfig(value: unknown): StoredConfig | null {
  if (value === null || value === undefined) return null;
  // Or written by an earlier version as a JavaScript value.
  const config =
    (value instanceof Uint8Array ? json(value, "the configuration") : value) as Partial<
      StoredConfig
    >;
  if (typeof config.evidence_extractor_url === "string" && typeof config.updated_at === "string") {
    return { evidence_extractor_url: config.evidence_extractor_url, updated_at: config.updated_at };
  }
  throw new LayoutError("the configuration has an unknown layout");
}

/** A lease: who holds it, until when (Unix ms). */
export interface LeaseValue {
  holder: string;
  until: number;
}

/** A lease as stored: UTF-8 JSON `{"holder","until"}`. */
export function encodeLease(lease: LeaseValue): Uint8Array {
  return encodeJson({ holder: lease.holder, until: lease.until });
}

/**
 * A stored lease, or null when there is none or it cannot be read: a lease
 * lasts seconds, so one unreadable reads as run out.
 */
export function decodeLease(value: unknown): LeaseValue | null {
  try {
    const { holder, until } = json(value, "a lease");
    return typeof holder === "string" && Number.isSafeInteger(until)
      ? { holder, until: until as number }
      : null;
  } catch {
    return null;
  }
}

const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const isTime = (v: unknown) => v === null || isCount(v);

/** A webhook endpoint as stored: UTF-8 JSON. */
export const encodeEndpoint = (endpoint: Endpoint): Uint8Array => encodeJson(endpoint);

/** A stored webhook endpoint. */
export function decodeEndpoint(value: unknown): Endpoint {
  const e = json(value, "a webhook endpoint");
  const ok = typeof e.id === "string" && typeof e.url === "string" &&
    (e.events === null || Array.isArray(e.events)) && typeof e.description === "string" &&
    ["active", "paused", "disabled"].includes(e.status as string) &&
    Array.isArray(e.secrets) && e.secrets.length > 0 && isCount(e.position) &&
    (e.retrying === null || isCount(e.retrying)) && isCount(e.failures) && isTime(e.retryAt) &&
    isCount(e.attempts) && typeof e.createdAt === "string";
  if (!ok) throw new LayoutError("a webhook endpoint has an unknown layout");
  return e as unknown as Endpoint;
}

/** A webhook attempt as stored: UTF-8 JSON. */
export const encodeAttempt = (attempt: AttemptRecord): Uint8Array => encodeJson(attempt);

/** A stored webhook attempt. */
export function decodeAttempt(value: unknown): AttemptRecord {
  const a = json(value, "a webhook attempt");
  if (typeof a.eventId !== "string" || !isCount(a.attempt) || typeof a.at !== "string") {
    throw new LayoutError("a webhook attempt has an unknown layout");
  }
  return a as unknown as AttemptRecord;
}

/** A stored count (absent: 0). */
export function decodeCount(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (value instanceof Deno.KvU64) return Number(value.value);
  throw new LayoutError("a count has an unknown layout");
}
