/**
 * RFC 8785 JSON Canonicalization Scheme: the bytes that Variant A and Variant B
 * signatures cover. The server, the client library and the passkey page all
 * canonicalize through this one module.
 * @module
 */

import canonicalize from "canonicalize";

const encoder = new TextEncoder();

/**
 * UTF-8 of the JCS text of a JSON value.
 *
 * @param value a JSON value (as parsed from a request, or built by a client).
 * @returns the canonical bytes.
 * @throws {TypeError} when the value has no JSON text (e.g. `undefined`), or it
 *   holds a non-finite number or a lone surrogate.
 *
 * @example
 * ```ts
 * new TextDecoder().decode(canonicalBytes({ b: 1, a: "x" })); // '{"a":"x","b":1}'
 * ```
 */
export function canonicalBytes(value: unknown): Uint8Array {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw new TypeError(`Cannot canonicalize value: ${(error as Error).message}`);
  }
  if (text === undefined) throw new TypeError("Cannot canonicalize value: it has no JSON text");
  return encoder.encode(text);
}
