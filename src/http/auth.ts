/**
 * Bearer-token comparison for the routes that need a token, in constant
 * time; `limits.ts`'s `requireToken` counts the wrong ones.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";

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
 * Whether the request carries one of `tokens` as its bearer token. Every
 * accepted token is compared, so timing does not tell which matched.
 *
 * @param tokens accepted tokens (undefined entries are skipped).
 */
export function bearerMatches(
  request: Request,
  tokens: readonly (string | undefined)[],
): boolean {
  const given = bearerToken(request);
  let ok = false;
  for (const token of tokens) {
    if (token !== undefined && given !== null && constantTimeEqual(given, token)) ok = true;
  }
  return ok;
}
