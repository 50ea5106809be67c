/**
 * Verifying webhook deliveries, for consumers of the service's webhooks
 * (docs/interface.md §11): each delivery is signed as the Standard Webhooks
 * specification defines, with the endpoint's `whsec_` secret. Web Crypto
 * only: it runs in Deno, Node and browsers (and workers).
 *
 * @example
 * ```ts ignore
 * import { verifyWebhook, WebhookVerificationError } from "@intents/client";
 * Deno.serve(async (request) => {
 *   const body = await request.text(); // the raw body: never re-serialize before verifying
 *   try {
 *     const { id, payload } = await verifyWebhook(secret, request.headers, body);
 *     if (await seenBefore(id)) return new Response(null, { status: 204 }); // at least once
 *     await handle(payload); // { id, type, record }
 *     return new Response(null, { status: 204 });
 *   } catch (error) {
 *     if (error instanceof WebhookVerificationError) return new Response(null, { status: 400 });
 *     throw error;
 *   }
 * });
 * ```
 * @module
 */

import { base64 } from "@scure/base";
import {
  hmacSha256,
  SIGNATURE_VERSION,
  signedContent,
  webhookSecretKey,
} from "./webhook_signature.ts";
import type { IntentEvent } from "./types.ts";

/** Why a delivery did not verify: a stable code, for programs; the message is for people. */
export type WebhookVerificationCode =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is absent. */
  | "missing_header"
  /** One of them is present but not of its form (an id with `.`, a timestamp that is not whole seconds). */
  | "invalid_header"
  /** The timestamp is further from now than the tolerance: a replay, or a clock far off. */
  | "timestamp_out_of_tolerance"
  /** No `v1,` signature in the header is the secret's signature of this id, timestamp and body. */
  | "no_matching_signature"
  /** The signature matched, but the body is not UTF-8 JSON. */
  | "invalid_body";

/** A delivery that must not be trusted; see {@link WebhookVerificationError.code}. */
export class WebhookVerificationError extends Error {
  /** Why, as a stable code. */
  readonly code: WebhookVerificationCode;

  /**
   * A delivery refused for `code`.
   *
   * @param code why, as a stable code.
   * @param message why, for people.
   */
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
  }
}

/** Options of {@link verifyWebhook}. */
export interface VerifyWebhookOptions {
  /**
   * How far, in seconds, `webhook-timestamp` may be from now, either way
   * (default 300, the specification's recommendation). The timestamp is that
   * of the attempt, so retries arrive fresh.
   */
  toleranceS?: number;
  /** The current time (a `Date`, or milliseconds since the epoch); default `Date.now()`. */
  now?: Date | number;
}

/** A verified delivery. */
export interface VerifiedWebhook<T = IntentEvent> {
  /** `webhook-id`: the event id, the same on every attempt; drop repeats by it. */
  id: string;
  /** `webhook-timestamp`: Unix seconds when this attempt was sent. */
  timestamp: number;
  /** The body, parsed: `{"id", "type", "record"}` as the feed gives the event. */
  payload: T;
}

/** Headers as a `Headers` object or a plain record (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | undefined>;

const DEFAULT_TOLERANCE_S = 300;
const SIGNATURE_BYTES = 32;

/**
 * Verifies a delivery: the three Standard Webhooks headers are present and
 * well formed, the timestamp is within the tolerance of now, and one of the
 * `v1,` signatures in `webhook-signature` is the HMAC-SHA256 of
 * `{id}.{timestamp}.{body}` keyed with the secret (compared in constant
 * time). Other signature versions in the header are ignored, so a header
 * that also carries signatures of secrets being rotated, or of schemes not
 * known here, still verifies.
 *
 * @param secret the endpoint's secret, `whsec_...`, as the service showed it.
 * @param headers the request's headers.
 * @param body the raw body exactly as received (text, or its bytes).
 * @param options tolerance and clock.
 * @returns the id, timestamp and parsed body.
 * @throws {WebhookVerificationError} when the delivery does not verify.
 * @throws {TypeError} when `secret` is not a webhook secret.
 * @throws {RangeError} when `options.toleranceS` is negative or not finite.
 */
export async function verifyWebhook<T = IntentEvent>(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<VerifiedWebhook<T>> {
  const key = webhookSecretKey(secret);
  const toleranceS = options.toleranceS ?? DEFAULT_TOLERANCE_S;
  if (!Number.isFinite(toleranceS) || toleranceS < 0) {
    throw new RangeError("toleranceS must be a finite number of seconds, at least 0");
  }
  const id = header(headers, "webhook-id");
  const timestampText = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");

  if (!/^(?:0|[1-9][0-9]{0,15})$/.test(timestampText)) {
    throw new WebhookVerificationError(
      "invalid_header",
      "webhook-timestamp is not whole Unix seconds",
    );
  }
  const timestamp = Number(timestampText);
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceS) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `webhook-timestamp is more than ${toleranceS} seconds from now`,
    );
  }

  let content: Uint8Array<ArrayBuffer>;
  try {
    content = signedContent(id, timestampText, body);
  } catch {
    throw new WebhookVerificationError(
      "invalid_header",
      "webhook-id is not printable ASCII without white space and '.'",
    );
  }
  const expected = await hmacSha256(key, content);
  let matched = false;
  for (const candidate of v1Signatures(signatures)) {
    // No early exit: every candidate is compared, each in constant time.
    matched = equalConstantTime(candidate, expected) || matched;
  }
  if (!matched) {
    throw new WebhookVerificationError(
      "no_matching_signature",
      "no signature in webhook-signature matches this secret, id, timestamp and body",
    );
  }
  return { id, timestamp, payload: parseBody<T>(body) };
}

/** One header's value, required. */
function header(headers: WebhookHeaders, name: string): string {
  let value: string | null | undefined;
  if (headers instanceof Headers) {
    value = headers.get(name);
  } else {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    value = key === undefined ? undefined : headers[key];
  }
  if (value === null || value === undefined || value === "") {
    throw new WebhookVerificationError("missing_header", `${name} is missing`);
  }
  return value;
}

/** The decoded bytes of each well-formed `v1,<base64>` entry; anything else is skipped. */
function v1Signatures(value: string): Uint8Array[] {
  const found: Uint8Array[] = [];
  const version = `${SIGNATURE_VERSION},`;
  for (const entry of value.split(" ")) {
    if (!entry.startsWith(version)) continue;
    try {
      const bytes = base64.decode(entry.slice(version.length));
      if (bytes.length === SIGNATURE_BYTES) found.push(bytes);
    } catch {
      // Not base64: it cannot match, and must not stop the others from matching.
    }
  }
  return found;
}

/** Byte equality whose time depends on the length only (both are 32 bytes here). */
function equalConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
  return difference === 0;
}

function parseBody<T>(body: string | Uint8Array): T {
  try {
    const text = typeof body === "string" ? body : new TextDecoder("utf-8", { fatal: true }).decode(
      body,
    );
    return JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError("invalid_body", "the body is not UTF-8 JSON");
  }
}
