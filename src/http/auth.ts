/**
 * Bearer-token checks for admin endpoints, in constant time.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { HttpError } from "./respond.ts";

const encoder = new TextEncoder();

/**
 * Compares two strings without leaking, through timing, where they differ or
 * how long the expected one is: both are hashed first, then every byte of the
 * digests is compared.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = sha256(encoder.encode(a));
  const y = sha256(encoder.encode(b));
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/**
 * Throws 401 `unauthorized` unless the request carries one of `tokens`.
 *
 * @param tokens accepted tokens (undefined entries are skipped).
 */
export function requireBearer(request: Request, tokens: readonly (string | undefined)[]): void {
  const given = bearerToken(request);
  let ok = false;
  for (const token of tokens) {
    // Every accepted token is compared, so timing does not tell which matched.
    if (token !== undefined && given !== null && constantTimeEqual(given, token)) ok = true;
  }
  if (!ok) {
    throw new HttpError("unauthorized", "a valid bearer token is required", {
      "www-authenticate": "Bearer",
    });
  }
}
