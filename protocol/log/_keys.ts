/**
 * The text form of note keys, shared by the log's key (`note.ts`, type 0x01)
 * and witness cosigner keys (`cosignature.ts`, type 0x04): a verifier key is
 * `<name>+<key id>+<base64(type ‖ key)>`, a signer key the same after
 * `PRIVATE+KEY+`, as `golang.org/x/mod/sumdb/note` writes and reads them.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { base64 } from "@scure/base";
import { concatBytes } from "./_bytes.ts";

/** A key's parts, the key id checked. */
export interface KeyParts {
  name: string;
  keyId: number;
  /** The signature type byte (0x01 Ed25519 note signatures, 0x04 Ed25519 cosignatures). */
  type: number;
  /** The key material after the type byte (a public key, or a signer's seed). */
  key: Uint8Array;
}

/** Unicode white space as Go's `unicode.IsSpace` sees it. */
const SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** A lone surrogate: what UTF-8 cannot encode. */
export const LONE_SURROGATE =
  /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether a key name is valid: non-empty, well-formed, no Unicode space, no `+`. */
export function isValidKeyName(name: string): boolean {
  return typeof name === "string" && name !== "" && !SPACE.test(name) && !name.includes("+") &&
    !LONE_SURROGATE.test(name);
}

/**
 * The key id: the first four bytes, big-endian, of SHA-256(name ‖ "\n" ‖
 * type ‖ key), as signed-note recommends and Go's note package computes it.
 */
export function computeKeyId(name: string, type: number, key: Uint8Array): number {
  const digest = sha256(
    concatBytes(new TextEncoder().encode(`${name}\n`), new Uint8Array([type]), key),
  );
  return ((digest[0] * 256 + digest[1]) * 256 + digest[2]) * 256 + digest[3];
}

/** A key id as 8 lowercase hexadecimal digits. */
export function keyIdHex(keyId: number): string {
  return keyId.toString(16).padStart(8, "0");
}

/** The text of a key: `[PRIVATE+KEY+]<name>+<key id>+<base64(type ‖ key)>`. */
export function formatKey(parts: KeyParts, isPrivate: boolean): string {
  const body = base64.encode(concatBytes(new Uint8Array([parts.type]), parts.key));
  return `${isPrivate ? "PRIVATE+KEY+" : ""}${parts.name}+${keyIdHex(parts.keyId)}+${body}`;
}

/**
 * The parts of a key's text. The key id is not checked here: a signer key's
 * id is that of its public key, which only the caller can derive.
 *
 * @throws {SyntaxError} when the text is not of the form.
 */
export function splitKey(text: string, isPrivate: boolean): KeyParts {
  const what = isPrivate ? "a signer key" : "a verifier key";
  const fail = (why: string) => new SyntaxError(`Cannot parse ${what}: ${why}`);
  if (typeof text !== "string") throw fail("not a string");
  let rest = text;
  if (isPrivate) {
    if (!rest.startsWith("PRIVATE+KEY+")) throw fail('it does not start with "PRIVATE+KEY+"');
    rest = rest.slice("PRIVATE+KEY+".length);
  }
  const first = rest.indexOf("+");
  const second = first < 0 ? -1 : rest.indexOf("+", first + 1);
  if (second < 0) throw fail("it is not <name>+<key id>+<key>");
  const name = rest.slice(0, first);
  const hex = rest.slice(first + 1, second);
  if (!isValidKeyName(name)) throw fail("the name is empty or holds a space or a plus sign");
  // Go's strconv.ParseUint(hash, 16, 32) with eight digits: either case.
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) throw fail("the key id is not eight hexadecimal digits");
  let bytes: Uint8Array;
  try {
    bytes = base64.decode(rest.slice(second + 1));
  } catch {
    throw fail("the key is not padded base64 (RFC 4648 §4)");
  }
  if (bytes.length === 0) throw fail("the key is empty");
  return { name, keyId: parseInt(hex, 16), type: bytes[0], key: bytes.slice(1) };
}

/** Whether the text holds an ASCII control character (below U+0020) other than, if allowed, newline. */
export function hasControl(text: string, newlineAllowed: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 && !(newlineAllowed && code === 0x0a)) return true;
  }
  return false;
}
