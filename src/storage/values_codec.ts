/**
 * How the store writes its templates, policies, runtime configuration and
 * leases (the feed mover's and each webhook endpoint's): bytes only, as `codec.ts` says why. Each layout is documented beside its
 * key in `keys.ts`; the decoders also take what an earlier version wrote
 * (plain JavaScript values), which `deno task store-upgrade` rewrites.
 * @module
 */

import type { StoredConfig, StoredDocument } from "../domain/intent.ts";
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

/** The runtime configuration as stored: UTF-8 JSON. */
export function encodeConfig(config: StoredConfig): Uint8Array {
  return encoder.encode(
    JSON.stringify({
      evidence_extractor_url: config.evidence_extractor_url,
      updated_at: config.updated_at,
    }),
  );
}

/** The stored runtime configuration, or null when absent. */
export function decodeConfig(value: unknown): StoredConfig | null {
  if (value === null || value === undefined) return null;
  let parsed: unknown = value;
  if (value instanceof Uint8Array) {
    try {
      parsed = JSON.parse(strictDecoder.decode(value));
    } catch {
      throw new LayoutError("the configuration is not JSON");
    }
  }
  const config = parsed as Partial<StoredConfig>;
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
  return encoder.encode(JSON.stringify({ holder: lease.holder, until: lease.until }));
}

/**
 * A stored lease, or null when there is none or it cannot be read: a lease
 * lasts seconds, so one unreadable reads as run out.
 */
export function decodeLease(value: unknown): LeaseValue | null {
  if (!(value instanceof Uint8Array)) return null;
  try {
    const { holder, until } = JSON.parse(strictDecoder.decode(value));
    return typeof holder === "string" && Number.isSafeInteger(until) ? { holder, until } : null;
  } catch {
    return null;
  }
}
