/**
 * Strict ASN.1 DER for ECDSA-Sig-Value (RFC 3279 §2.2.3, X.690 §10) on P-256.
 *
 * Authenticators send signatures in DER. Accepting BER variants (long-form
 * lengths, padded integers, trailing bytes) would make one signature have many
 * encodings, so the parser accepts exactly the one canonical encoding.
 * @module
 */

import { hexToBytes } from "@noble/curves/utils.js";

/** The order n of the P-256 group, big-endian (FIPS 186-5 / SEC 2 §2.4.2). */
const P256_ORDER = hexToBytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");

const SCALAR_BYTES = 32;
const TAG_SEQUENCE = 0x30;
const TAG_INTEGER = 0x02;

/** Reads one DER length at `offset`; returns the length and the offset after it. */
function readLength(der: Uint8Array, offset: number, what: string): [number, number] {
  if (offset >= der.length) {
    throw new SyntaxError(`Cannot parse DER signature: ${what} length is missing`);
  }
  const first = der[offset];
  if (first < 0x80) return [first, offset + 1];
  // X.690 §10.1: DER uses the definite form with the minimum number of octets.
  const count = first & 0x7f;
  if (count === 0) {
    throw new SyntaxError(`Cannot parse DER signature: ${what} has an indefinite length`);
  }
  // Anything needing more than two length octets is far larger than any P-256 signature.
  if (count > 2) throw new SyntaxError(`Cannot parse DER signature: ${what} length is too large`);
  if (offset + 1 + count > der.length) {
    throw new SyntaxError(`Cannot parse DER signature: ${what} length is truncated`);
  }
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + der[offset + 1 + i];
  if (der[offset + 1] === 0 || length < 0x80) {
    throw new SyntaxError(`Cannot parse DER signature: ${what} length is not minimal`);
  }
  return [length, offset + 1 + count];
}

/** Reads one INTEGER at `offset`; returns its 32-byte big-endian value and the offset after it. */
function readScalar(der: Uint8Array, offset: number, name: "r" | "s"): [Uint8Array, number] {
  if (offset >= der.length || der[offset] !== TAG_INTEGER) {
    throw new SyntaxError(`Cannot parse DER signature: ${name} is not an INTEGER`);
  }
  const [length, start] = readLength(der, offset + 1, name);
  const end = start + length;
  if (end > der.length) throw new SyntaxError(`Cannot parse DER signature: ${name} is truncated`);
  if (length === 0) throw new SyntaxError(`Cannot parse DER signature: ${name} is empty`);
  // X.690 §8.3.2: the first nine bits of an INTEGER are never all equal.
  if (der[start] & 0x80) throw new SyntaxError(`Cannot parse DER signature: ${name} is negative`);
  if (der[start] === 0 && length > 1 && (der[start + 1] & 0x80) === 0) {
    throw new SyntaxError(`Cannot parse DER signature: ${name} has a superfluous leading zero`);
  }
  const magnitude = der[start] === 0 ? der.subarray(start + 1, end) : der.subarray(start, end);
  if (magnitude.length > SCALAR_BYTES) {
    throw new RangeError(`Invalid DER signature: ${name} is not below the curve order`);
  }
  const value = new Uint8Array(SCALAR_BYTES);
  value.set(magnitude, SCALAR_BYTES - magnitude.length);
  if (value.every((byte) => byte === 0)) {
    throw new RangeError(`Invalid DER signature: ${name} is zero`);
  }
  if (compareBytes(value, P256_ORDER) >= 0) {
    throw new RangeError(`Invalid DER signature: ${name} is not below the curve order`);
  }
  return [value, end];
}

/** Big-endian comparison of two equal-length byte strings. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/**
 * Parses a strict ASN.1 DER ECDSA-Sig-Value (SEQUENCE of two INTEGERs) into
 * the 64-byte `r || s` form that Web Crypto verifies.
 *
 * @param der the DER signature, exactly as an authenticator emits it.
 * @returns 64 bytes: `r` then `s`, each 32 bytes big-endian.
 * @throws {SyntaxError} when the input is not strict DER: wrong tags, long-form
 * lengths where the short form is required, non-minimal or negative integers,
 * trailing bytes, or lengths that disagree with the content.
 * @throws {RangeError} when `r` or `s` is 0 or not below the curve order n.
 *
 * @example
 * ```ts
 * const der = encodeDerEcdsaSignature(new Uint8Array(64).fill(1));
 * const rs = parseDerEcdsaSignature(der); // rs.length === 64
 * ```
 */
export function parseDerEcdsaSignature(der: Uint8Array): Uint8Array {
  if (!(der instanceof Uint8Array)) {
    throw new TypeError("Cannot parse DER signature: expected a Uint8Array");
  }
  if (der.length === 0 || der[0] !== TAG_SEQUENCE) {
    throw new SyntaxError("Cannot parse DER signature: not a SEQUENCE");
  }
  const [length, start] = readLength(der, 1, "SEQUENCE");
  const end = start + length;
  if (end < der.length) throw new SyntaxError("Cannot parse DER signature: trailing bytes");
  if (end > der.length) throw new SyntaxError("Cannot parse DER signature: SEQUENCE is truncated");
  const [r, afterR] = readScalar(der, start, "r");
  if (afterR >= end) throw new SyntaxError("Cannot parse DER signature: s is missing");
  const [s, afterS] = readScalar(der, afterR, "s");
  if (afterS !== end) {
    throw new SyntaxError("Cannot parse DER signature: SEQUENCE length disagrees with its content");
  }
  const rs = new Uint8Array(2 * SCALAR_BYTES);
  rs.set(r, 0);
  rs.set(s, SCALAR_BYTES);
  return rs;
}

/** Minimal DER INTEGER content for an unsigned big-endian value. */
function integerContent(value: Uint8Array): Uint8Array {
  let first = 0;
  while (first < value.length - 1 && value[first] === 0) first++;
  const magnitude = value.subarray(first);
  if (magnitude[0] & 0x80) {
    const padded = new Uint8Array(magnitude.length + 1);
    padded.set(magnitude, 1);
    return padded;
  }
  return magnitude;
}

/**
 * Encodes a 64-byte `r || s` signature as minimal DER (for clients and tests).
 * Values are encoded as given, even 0 or values not below n, so tests can
 * build out-of-range signatures.
 *
 * @param rs 64 bytes: `r` then `s`, each 32 bytes big-endian.
 * @returns the DER ECDSA-Sig-Value.
 * @throws {RangeError} when `rs` is not 64 bytes.
 *
 * @example
 * ```ts
 * const { privateKey } = await crypto.subtle.generateKey(
 *   { name: "ECDSA", namedCurve: "P-256" },
 *   false,
 *   ["sign", "verify"],
 * );
 * const message = new TextEncoder().encode("hello");
 * const rs = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, message);
 * const der = encodeDerEcdsaSignature(new Uint8Array(rs)); // what an authenticator would emit
 * ```
 */
export function encodeDerEcdsaSignature(rs: Uint8Array): Uint8Array {
  if (!(rs instanceof Uint8Array) || rs.length !== 2 * SCALAR_BYTES) {
    throw new RangeError("Cannot encode DER signature: expected 64 bytes of r || s");
  }
  const r = integerContent(rs.subarray(0, SCALAR_BYTES));
  const s = integerContent(rs.subarray(SCALAR_BYTES));
  // Each INTEGER is at most 33 bytes, so every length fits the short form.
  const body = 2 + r.length + 2 + s.length;
  const der = new Uint8Array(2 + body);
  der.set([TAG_SEQUENCE, body, TAG_INTEGER, r.length], 0);
  der.set(r, 4);
  der.set([TAG_INTEGER, s.length], 4 + r.length);
  der.set(s, 6 + r.length);
  return der;
}
