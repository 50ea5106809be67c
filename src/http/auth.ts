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
function constantTimeEqual(a: string, b: string): boolean {
  const x = sha256(encoder.encode(a));
  const y = sha256(encoder.encode(b));
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

/**
 * Whether the request carries one of `tokens` (undefined ones skipped) as its
 * `Authorization: Bearer` token. Every accepted token is compared, so timing
 * does not tell which matched.
 */
export function bearerMatches(
  request: Request,
  tokens: readonly (string | undefined)[],
): boolean {
  const given = /^Bearer[ ]+([^\s]+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  let ok = false;
  for (const token of tokens) {
    if (token !== undefined && given !== undefined && constantTimeEqual(given, token)) ok = true;
  }
  return ok;
}
