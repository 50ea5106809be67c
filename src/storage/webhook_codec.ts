/**
 * How the webhook values are stored: UTF-8 JSON bytes, as `keys.ts`
 * documents them beside their keys. A value that is not of its layout is a
 * {@link LayoutError}: nothing of the service writes one.
 * @module
 */

import type { AttemptRecord, Endpoint } from "../webhooks/endpoint.ts";
import { LayoutError } from "./codec.ts";

const encoder = new TextEncoder();
const strict = new TextDecoder("utf-8", { fatal: true });

function json(value: unknown, what: string): Record<string, unknown> {
  if (!(value instanceof Uint8Array)) throw new LayoutError(`${what} is not bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(strict.decode(value));
  } catch {
    throw new LayoutError(`${what} is not UTF-8 JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new LayoutError(`${what} is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
const isTime = (v: unknown) => v === null || isCount(v);

/** An endpoint as stored. */
export function encodeEndpoint(endpoint: Endpoint): Uint8Array {
  return encoder.encode(JSON.stringify(endpoint));
}

/** A stored endpoint. */
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

/** An attempt as stored. */
export function encodeAttempt(attempt: AttemptRecord): Uint8Array {
  return encoder.encode(JSON.stringify(attempt));
}

/** A stored attempt. */
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
