/**
 * What only the sender of webhooks does (docs/interface.md §11): making a
 * new secret, and the headers of one delivery attempt. The signature itself
 * is the wire protocol's (`@intents/protocol/webhook_signature`), which
 * receivers verify with the same functions.
 * @module
 */

import { base64 } from "@scure/base";
import { signatureHeader, WEBHOOK_SECRET_PREFIX } from "@intents/protocol/webhook_signature";

/** Bytes of key material in a secret this service makes. */
export const WEBHOOK_SECRET_BYTES = 32;

/**
 * Makes a new secret: `whsec_` + padded base64 of 32 bytes from the
 * platform's cryptographic random source (56 characters after the prefix).
 *
 * @example
 * ```ts
 * newWebhookSecret(); // "whsec_q0V3...Zs8="
 * ```
 */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(WEBHOOK_SECRET_BYTES));
  return WEBHOOK_SECRET_PREFIX + base64.encode(bytes);
}

/** What {@link deliveryHeaders} needs. */
export interface DeliveryHeadersOptions {
  /** The secrets in force, newest first. */
  secrets: readonly string[];
  /** The event id: the same on every attempt. */
  id: string;
  /** Unix seconds when this attempt is sent. */
  timestampS: number;
  /** The body exactly as it will be sent (one line of JSON). */
  body: string | Uint8Array;
}

/**
 * The headers of one delivery attempt, exactly: `content-type:
 * application/json`, `webhook-id`, `webhook-timestamp`, `webhook-signature`.
 * (`deliverOnce` adds the transport's `host`, `content-length` and
 * `connection`.)
 *
 * @throws {RangeError | TypeError} as {@link signatureHeader} does.
 *
 * @example
 * ```ts ignore
 * const body = JSON.stringify(event);
 * const headers = await deliveryHeaders({
 *   secrets, id: event.id, timestampS: Math.floor(Date.now() / 1000), body,
 * });
 * ```
 */
export async function deliveryHeaders(
  options: DeliveryHeadersOptions,
): Promise<Record<string, string>> {
  const { secrets, id, timestampS, body } = options;
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestampS),
    "webhook-signature": await signatureHeader(secrets, id, timestampS, body),
  };
}
