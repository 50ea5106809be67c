/**
 * Webhook secrets and signatures as the Standard Webhooks specification
 * (v1.0.0, "Signature scheme" and "Webhook headers") and docs/interface.md §11
 * define them: a secret is `whsec_` + base64 (RFC 4648 §4, padded) of random
 * bytes; a delivery carries `webhook-id`, `webhook-timestamp` and
 * `webhook-signature`, the last being `v1,` + base64 of HMAC-SHA256, keyed
 * with the secret's bytes, of `{webhook-id}.{webhook-timestamp}.{body}`, once
 * per secret in force, newest first, separated by single spaces.
 *
 * The service signs with {@link signatureHeader}; receivers verify with
 * `verifyWebhook` (`webhook_verify.ts`), over the same functions. Web Crypto
 * and pure code only, so both run in browsers too.
 * @module
 */

import { base64 } from "@scure/base";

/** What every webhook secret starts with. */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** The signature version of HMAC-SHA256 in `webhook-signature`. */
export const SIGNATURE_VERSION = "v1";

// The specification: "Random. At least 24 bytes (192 bits, 512 maximum)".
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/**
 * The key bytes of a secret: its base64 part decoded strictly (padding
 * required, no white space, no other alphabet, no stray bits).
 *
 * @param secret `whsec_` + base64 of 24 to 64 bytes (this service makes 32).
 * @returns the HMAC key.
 * @throws {TypeError} when `secret` lacks the prefix or its rest is not base64.
 * @throws {RangeError} when the key is shorter than 24 or longer than 64 bytes.
 *
 * @example
 * ```ts
 * webhookSecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").length; // 24
 * ```
 */
export function webhookSecretKey(secret: string): Uint8Array {
  if (typeof secret !== "string" || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new TypeError(`a webhook secret starts with "${WEBHOOK_SECRET_PREFIX}"`);
  }
  let key: Uint8Array;
  try {
    key = base64.decode(secret.slice(WEBHOOK_SECRET_PREFIX.length));
  } catch {
    throw new TypeError(
      `a webhook secret is "${WEBHOOK_SECRET_PREFIX}" followed by padded base64 (RFC 4648 §4)`,
    );
  }
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new RangeError(
      `a webhook secret's key is ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes, not ${key.length}`,
    );
  }
  return key;
}

/**
 * The bytes a signature covers: UTF-8 of `{msgId}.{timestamp}.` followed by
 * the body's bytes (a string body as UTF-8, a byte body as it is).
 *
 * @param msgId the `webhook-id`: printable ASCII without `.` (the separator).
 * @param timestamp the `webhook-timestamp` as it is sent: whole Unix seconds.
 * @param body the request body exactly as sent.
 * @throws {TypeError} when `msgId` is empty, has a `.`, or has characters a header cannot carry plainly.
 * @throws {RangeError} when `timestamp` is not a whole number of seconds from 0 to 2^53 − 1.
 */
export function signedContent(
  msgId: string,
  timestamp: number | string,
  body: string | Uint8Array,
): Uint8Array<ArrayBuffer> {
  if (!/^[\x21-\x2d\x2f-\x7e]+$/.test(msgId)) {
    // A "." would let one (id, timestamp) pair pass for another (the specification's warning).
    throw new TypeError("a webhook id is printable ASCII without white space or '.'");
  }
  const seconds = typeof timestamp === "number" ? timestamp : Number(timestamp);
  if (
    !Number.isSafeInteger(seconds) || seconds < 0 ||
    (typeof timestamp === "string" && String(seconds) !== timestamp)
  ) {
    throw new RangeError("a webhook timestamp is whole Unix seconds, written in decimal");
  }
  // No module-level encoder: the browser bundle, which imports this module, keeps no leftovers.
  const encoder = new TextEncoder();
  const head = encoder.encode(`${msgId}.${seconds}.`);
  const tail = typeof body === "string" ? encoder.encode(body) : body;
  const content = new Uint8Array(head.length + tail.length);
  content.set(head);
  content.set(tail, head.length);
  return content;
}

/**
 * HMAC-SHA256 of `content` keyed with `key` (32 bytes).
 *
 * @param key a secret's key bytes (see {@link webhookSecretKey}).
 * @param content what is signed (see {@link signedContent}).
 */
export async function hmacSha256(
  key: Uint8Array,
  content: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array> {
  // SHA-256 named explicitly; the key length is the key's own (no truncation, no padding rule).
  const cryptoKey = await crypto.subtle.importKey(
    "raw",
    new Uint8Array(key),
    { name: "HMAC", hash: { name: "SHA-256" } },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", cryptoKey, content);
  return new Uint8Array(mac);
}

/**
 * The value of `webhook-signature` for one delivery attempt: `v1,` + base64
 * of the HMAC with each secret, in the order given (newest first, as §11
 * asks), separated by one space.
 *
 * @param secrets the secrets in force, newest first; at least one.
 * @param msgId the `webhook-id` (the event id).
 * @param timestampS the `webhook-timestamp`: Unix seconds when this attempt is sent.
 * @param body the request body exactly as sent.
 * @throws {RangeError} when `secrets` is empty, or as {@link signedContent} and {@link webhookSecretKey} do.
 * @throws {TypeError} as {@link signedContent} and {@link webhookSecretKey} do.
 *
 * @example
 * ```ts
 * await signatureHeader(
 *   ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
 *   "msg_p5jXN8AQM9LWM0D4loKWxJek",
 *   1614265330,
 *   '{"test": 2432232314}',
 * ); // "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
 * ```
 */
export async function signatureHeader(
  secrets: readonly string[],
  msgId: string,
  timestampS: number,
  body: string | Uint8Array,
): Promise<string> {
  if (secrets.length === 0) throw new RangeError("at least one webhook secret must be in force");
  const keys = secrets.map(webhookSecretKey);
  const content = signedContent(msgId, timestampS, body);
  const macs = await Promise.all(keys.map((key) => hmacSha256(key, content)));
  return macs.map((mac) => `${SIGNATURE_VERSION},${base64.encode(mac)}`).join(" ");
}
