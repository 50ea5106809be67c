/**
 * SHA-256 for the log's hashing (private to the log's modules). A tree
 * hashes short inputs by the million (a leaf: 1 + ~100 bytes, a node:
 * 65 bytes), where the fixed cost of a call dominates: those are hashed
 * here, in one compression function over buffers allocated once (about
 * three times faster than a call into the runtime's or noble's, which
 * allocate per call). Longer inputs (records) go to the runtime's own
 * where it offers `node:crypto` (Deno, Node.js), else to noble's
 * (browsers). All three are SHA-256 (FIPS 180-4): the digest is the same,
 * which the unit tests check against noble's for every length and split.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { base64urlnopad } from "@scure/base";
import { concatBytes } from "./_bytes.ts";
import { nodeCrypto } from "./_node_crypto.ts";

const createHash = nodeCrypto?.createHash;
/**
 * Its one-shot digest, straight to text: in hex, the runtime's fastest way
 * out (Deno: no hash object, no buffer; about half the cost of base64url).
 */
const hashHex = nodeCrypto?.hash;

/** Base64url without padding of SHA-256 of `bytes`. */
export function sha256Base64url(bytes: Uint8Array): string {
  if (hashHex) return base64urlOfHex32(hashHex("sha256", bytes, "hex"));
  return base64urlnopad.encode(sha256Of(bytes));
}

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** The 43 characters' codes, filled per call (no await in between). */
const base64urlCodes: number[] = new Array(43).fill(0);

/** A hex digit's value (the runtime writes lower case). */
function hexDigit(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

/**
 * Base64url without padding of 32 bytes given in hex (64 digits): ten groups
 * of three bytes (four characters each), then two bytes (three characters).
 */
function base64urlOfHex32(hex: string): string {
  let k = 0;
  for (let i = 0; i < 60; i += 6) {
    let bits = 0;
    for (let j = i; j < i + 6; j++) bits = (bits << 4) | hexDigit(hex.charCodeAt(j));
    base64urlCodes[k++] = BASE64URL.charCodeAt(bits >>> 18);
    base64urlCodes[k++] = BASE64URL.charCodeAt((bits >>> 12) & 63);
    base64urlCodes[k++] = BASE64URL.charCodeAt((bits >>> 6) & 63);
    base64urlCodes[k++] = BASE64URL.charCodeAt(bits & 63);
  }
  let last = 0;
  for (let j = 60; j < 64; j++) last = (last << 4) | hexDigit(hex.charCodeAt(j));
  last <<= 2;
  base64urlCodes[k++] = BASE64URL.charCodeAt(last >>> 12);
  base64urlCodes[k++] = BASE64URL.charCodeAt((last >>> 6) & 63);
  base64urlCodes[k] = BASE64URL.charCodeAt(last & 63);
  return String.fromCharCode.apply(null, base64urlCodes);
}

/** Inputs up to this many bytes are hashed here; longer ones by the runtime (faster there). */
const SHORT_BYTES = 512;

/** SHA-256 of the concatenation of `parts`. */
export function sha256Of(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  let length = 0;
  for (let p = 0; p < parts.length; p++) length += parts[p].length;
  if (length <= SHORT_BYTES) {
    start();
    for (let p = 0; p < parts.length; p++) absorb(parts[p]);
    return finish(length);
  }
  if (createHash) {
    const hash = createHash("sha256");
    for (let p = 0; p < parts.length; p++) hash.update(parts[p]);
    // A copy of its own: the runtime's digest may be a view of a shared buffer.
    return new Uint8Array(hash.digest());
  }
  return sha256(parts.length === 1 ? parts[0] : concatBytes(...parts)) as Uint8Array<ArrayBuffer>;
}

/**
 * SHA-256 of one byte `prefix`, then `a`, then `b` if given: the tree's
 * leaves and nodes (RFC 6962's domain separation), hashed without an array
 * or a view made per call (the tree hashes them by the million).
 */
export function sha256Prefixed(
  prefix: number,
  a: Uint8Array,
  b?: Uint8Array,
): Uint8Array<ArrayBuffer> {
  const length = 1 + a.length + (b === undefined ? 0 : b.length);
  if (length > SHORT_BYTES) {
    const head = Uint8Array.of(prefix);
    return b === undefined ? sha256Of(head, a) : sha256Of(head, a, b);
  }
  start();
  block[0] = prefix;
  fill = 1;
  absorb(a);
  if (b !== undefined) absorb(b);
  return finish(length);
}

/** The round constants (FIPS 180-4 §4.2.2). */
// deno-fmt-ignore
const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
/** The initial hash value (FIPS 180-4 §5.3.3). */
// deno-fmt-ignore
const IV = Int32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
/** The state, the message schedule and the block being filled: one hash at a time (no await). */
const H = new Int32Array(8);
const W = new Int32Array(64);
const block = new Uint8Array(64);
/** Bytes of `block` filled. */
let fill = 0;

function start(): void {
  H.set(IV);
  fill = 0;
}

/** Adds `bytes` to the message, compressing each block as it fills (byte by byte: no views). */
function absorb(bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) {
    block[fill++] = bytes[i];
    if (fill === 64) {
      compress();
      fill = 0;
    }
  }
}

/** Pads the message of `length` bytes and returns its digest. */
function finish(length: number): Uint8Array<ArrayBuffer> {
  // Padding: 0x80, zeros, then the length in bits as a big-endian 64-bit integer.
  block[fill++] = 0x80;
  if (fill > 56) {
    block.fill(0, fill);
    compress();
    fill = 0;
  }
  block.fill(0, fill, 56);
  const high = Math.floor(length / 0x20000000);
  const low = (length << 3) >>> 0;
  for (let i = 0; i < 4; i++) {
    block[56 + i] = high >>> (24 - 8 * i);
    block[60 + i] = low >>> (24 - 8 * i);
  }
  compress();
  const out = digestOut();
  for (let i = 0; i < 8; i++) {
    out[4 * i] = H[i] >>> 24;
    out[4 * i + 1] = H[i] >>> 16;
    out[4 * i + 2] = H[i] >>> 8;
    out[4 * i + 3] = H[i];
  }
  return out;
}

/**
 * Bytes that digests are carved from: a typed array of its own costs the
 * runtime about as much as hashing a node (its own backing store), a view
 * of a shared one a few nanoseconds. A slab lives while any digest of it does.
 */
const DIGEST_SLAB_BYTES = 65_536;
let digests = new Uint8Array(DIGEST_SLAB_BYTES);
let carved = 0;

/** 32 bytes of their own, for one digest. */
function digestOut(): Uint8Array<ArrayBuffer> {
  if (carved === DIGEST_SLAB_BYTES) {
    digests = new Uint8Array(DIGEST_SLAB_BYTES);
    carved = 0;
  }
  return digests.subarray(carved, carved += 32);
}

/** The compression function (FIPS 180-4 §6.2.2) of `block` into `H`. */
function compress(): void {
  for (let i = 0; i < 16; i++) {
    const j = 4 * i;
    W[i] = (block[j] << 24) | (block[j + 1] << 16) | (block[j + 2] << 8) | block[j + 3];
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15];
    const y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0] + a) | 0;
  H[1] = (H[1] + b) | 0;
  H[2] = (H[2] + c) | 0;
  H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0;
  H[5] = (H[5] + f) | 0;
  H[6] = (H[6] + g) | 0;
  H[7] = (H[7] + h) | 0;
}
