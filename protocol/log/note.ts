/**
 * Signed notes as C2SP signed-note defines them and
 * `golang.org/x/mod/sumdb/note` writes and reads them: a text ending in a
 * newline, an empty line, then one or more lines `— <key name>
 * base64(key id ‖ signature)`. The log signs with an Ed25519 key (type
 * 0x01), written `PRIVATE+KEY+<name>+<key id>+<base64(0x01 ‖ seed)>`; its
 * verifier key is `<name>+<key id>+<base64(0x01 ‖ public key)>`, the key id
 * being the first four bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key).
 *
 * {@link openNote} follows Go's `note.Open`: signatures by unknown keys are
 * kept aside and ignored, a known key's signature that fails rejects the
 * note, and a note with no verified signature is rejected.
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { base64 } from "@scure/base";
import { concatBytes } from "./_bytes.ts";
import { nodeCrypto } from "./_node_crypto.ts";
import {
  computeKeyId,
  formatKey,
  hasControl,
  isValidKeyName,
  keyIdHex,
  LONE_SURROGATE,
  splitKey,
} from "./_keys.ts";

export { computeKeyId, isValidKeyName, keyIdHex };

/** The signature type of Ed25519 note signatures. */
export const ED25519_NOTE_TYPE = 0x01;

/** At most this many signature lines are read (Go's limit; the specification asks for 16 at least). */
export const MAX_NOTE_SIGNATURES = 100;

/** Checks signatures by one key. */
export interface NoteVerifier {
  /** The key's name. */
  readonly name: string;
  /** The key's id (a uint32). */
  readonly keyId: number;
  /** Whether `signature` (the bytes after the key id) signs `text`; never throws. */
  verify(text: Uint8Array, signature: Uint8Array): boolean;
}

/** Signs with one key. */
export interface NoteSigner {
  /** The key's name. */
  readonly name: string;
  /** The key's id (a uint32). */
  readonly keyId: number;
  /** The signature of `text` (without the key id). */
  sign(text: Uint8Array): Uint8Array;
}

/** One signature line of a note. */
export interface NoteSignature {
  /** The signing key's name. */
  name: string;
  /** The signing key's id (a uint32). */
  keyId: number;
  /** The signature's bytes after the key id. */
  signature: Uint8Array;
}

/** A signed note, read but not verified. */
export interface SignedNote {
  /** The text, with its final newline, without the empty line. */
  text: string;
  /** The signature lines, in order. */
  signatures: NoteSignature[];
}

/** What {@link openNote} found. */
export type OpenedNote =
  | { ok: true; text: string; verified: NoteSignature[]; unverified: NoteSignature[] }
  | { ok: false; error: "invalid_signature"; name: string; keyId: number }
  | { ok: false; error: "no_known_signature"; text: string; unverified: NoteSignature[] };

/**
 * A new Ed25519 note key pair for `name`, from 32 random bytes.
 *
 * @throws {TypeError} when `name` is empty or holds a space or `+`.
 *
 * @example
 * ```ts
 * const { signerKey, verifierKey } = generateNoteKey("example.com/log");
 * verifierKey.startsWith("example.com/log+"); // true
 * ```
 */
export function generateNoteKey(name: string): { signerKey: string; verifierKey: string } {
  if (!isValidKeyName(name)) throw new TypeError("a key name is non-empty, without spaces or '+'");
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const publicKey = ed25519.getPublicKey(seed);
  const keyId = computeKeyId(name, ED25519_NOTE_TYPE, publicKey);
  return {
    signerKey: formatKey({ name, keyId, type: ED25519_NOTE_TYPE, key: seed }, true),
    verifierKey: formatKey({ name, keyId, type: ED25519_NOTE_TYPE, key: publicKey }, false),
  };
}

/**
 * The verifier key of an Ed25519 public key: `<name>+<key id>+<base64(0x01 ‖ key)>`.
 *
 * @throws {TypeError} when the name is not valid or the key is not 32 bytes.
 */
export function formatVerifierKey(name: string, publicKey: Uint8Array): string {
  if (!isValidKeyName(name)) throw new TypeError("a key name is non-empty, without spaces or '+'");
  if (publicKey.length !== 32) throw new TypeError("an Ed25519 public key is 32 bytes");
  const keyId = computeKeyId(name, ED25519_NOTE_TYPE, publicKey);
  return formatKey({ name, keyId, type: ED25519_NOTE_TYPE, key: publicKey }, false);
}

/**
 * A verifier from a verifier key, checking its key id as Go's
 * `note.NewVerifier` does.
 *
 * @throws {SyntaxError} when the key is malformed, of another type, or its key id is wrong.
 */
export function parseVerifierKey(verifierKey: string): NoteVerifier & { publicKey: Uint8Array } {
  const parts = splitKey(verifierKey, false);
  if (parts.type !== ED25519_NOTE_TYPE) {
    throw new SyntaxError(`Cannot parse a verifier key: type ${parts.type} is not Ed25519 (1)`);
  }
  if (parts.key.length !== 32) {
    throw new SyntaxError("Cannot parse a verifier key: an Ed25519 public key is 32 bytes");
  }
  if (computeKeyId(parts.name, parts.type, parts.key) !== parts.keyId) {
    throw new SyntaxError("Cannot parse a verifier key: the key id does not match the key");
  }
  const publicKey = parts.key;
  return {
    name: parts.name,
    keyId: parts.keyId,
    publicKey,
    // zip215 false: strict RFC 8032, as for every Ed25519 signature of this service.
    verify: (text, signature) => verifyEd25519(signature, text, publicKey),
  };
}

/**
 * A signer from a signer key; the seed stays inside the signer's closure.
 *
 * @throws {SyntaxError} when the key is malformed, of another type, or its key id is wrong.
 */
export function parseSignerKey(signerKey: string): NoteSigner & { verifierKey: string } {
  const parts = splitKey(signerKey, true);
  if (parts.type !== ED25519_NOTE_TYPE) {
    throw new SyntaxError(`Cannot parse a signer key: type ${parts.type} is not Ed25519 (1)`);
  }
  if (parts.key.length !== 32) {
    throw new SyntaxError("Cannot parse a signer key: a seed is 32 bytes");
  }
  const seed = parts.key;
  const publicKey = ed25519.getPublicKey(seed);
  if (computeKeyId(parts.name, parts.type, publicKey) !== parts.keyId) {
    throw new SyntaxError("Cannot parse a signer key: the key id does not match the key");
  }
  return {
    name: parts.name,
    keyId: parts.keyId,
    verifierKey: formatVerifierKey(parts.name, publicKey),
    sign: ed25519Signer(seed),
  };
}

/** PKCS #8 of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
// deno-fmt-ignore
const PKCS8_ED25519 = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

/**
 * Ed25519 signing with `seed`: by the runtime's `node:crypto` where it has
 * it (about twenty times faster than noble's), else by noble's. RFC 8032
 * signatures are deterministic: both give the same bytes.
 */
function ed25519Signer(seed: Uint8Array): (text: Uint8Array) => Uint8Array {
  const { createPrivateKey, sign } = nodeCrypto ?? {};
  if (createPrivateKey && sign) {
    const key = createPrivateKey({
      key: concatBytes(PKCS8_ED25519, seed),
      format: "der",
      type: "pkcs8",
    });
    return (text) => new Uint8Array(sign(null, text, key));
  }
  return (text) => ed25519.sign(text, seed);
}

/**
 * The signature line's parts of `signer` over `text`.
 *
 * @throws {TypeError} as {@link signNote} does for the text.
 */
export function noteSignature(text: string, signer: NoteSigner): NoteSignature {
  assertNoteText(text);
  return {
    name: signer.name,
    keyId: signer.keyId,
    signature: signer.sign(new TextEncoder().encode(text)),
  };
}

/**
 * A signed note: `text`, an empty line, then a signature line per signer.
 * This module writes only texts without empty lines (checkpoints have none).
 *
 * @throws {TypeError} when the text does not end in a newline, has an empty
 *   line, a control character other than newline or a lone surrogate, or a
 *   signer's name is not valid.
 *
 * @example
 * ```ts
 * const { signerKey } = generateNoteKey("example.com/log");
 * signNote("hello\n", [parseSignerKey(signerKey)]); // "hello\n\n— example.com/log …\n"
 * ```
 */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  return formatSignedNote({ text, signatures: signers.map((s) => noteSignature(text, s)) });
}

/**
 * The text of a signed note from its parts, signatures in the order given.
 *
 * @throws {TypeError} as {@link signNote}, or when there is no signature.
 */
export function formatSignedNote(note: SignedNote): string {
  assertNoteText(note.text);
  if (note.signatures.length === 0) throw new TypeError("a signed note has a signature at least");
  const lines = note.signatures.map(({ name, keyId, signature }) => {
    if (!isValidKeyName(name)) {
      throw new TypeError("a key name is non-empty, without spaces or '+'");
    }
    const id = new Uint8Array(4);
    new DataView(id.buffer).setUint32(0, keyId);
    return `— ${name} ${base64.encode(concatBytes(id, signature))}\n`;
  });
  return `${note.text}\n${lines.join("")}`;
}

/**
 * The text and signature lines of a signed note, as Go's `note.Open` reads
 * them: valid UTF-8 without control characters but newline; the text is
 * everything up to the last empty line; each signature line is `— `, a valid
 * name, a space, and base64 of at least 5 bytes; at most 100 lines.
 *
 * @throws {SyntaxError} when the note is malformed.
 */
export function parseSignedNote(message: string | Uint8Array): SignedNote {
  const fail = (why: string) => new SyntaxError(`Cannot parse a signed note: ${why}`);
  let text: string;
  if (typeof message === "string") {
    if (LONE_SURROGATE.test(message)) throw fail("it holds a lone surrogate");
    text = message;
  } else {
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(message);
    } catch {
      throw fail("it is not UTF-8");
    }
  }
  if (hasControl(text, true)) throw fail("it holds a control character");
  const split = text.lastIndexOf("\n\n");
  if (split < 0) throw fail("no empty line before the signatures");
  const body = text.slice(0, split + 1);
  const block = text.slice(split + 2);
  if (block === "" || !block.endsWith("\n")) throw fail("the signatures do not end in a newline");
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > MAX_NOTE_SIGNATURES) throw fail(`more than ${MAX_NOTE_SIGNATURES} signatures`);
  const signatures = lines.map((line) => {
    if (!line.startsWith("— ")) {
      throw fail("a signature line does not start with an em dash and a space");
    }
    const rest = line.slice(2);
    const space = rest.indexOf(" ");
    const name = space < 0 ? rest : rest.slice(0, space);
    const encoded = space < 0 ? "" : rest.slice(space + 1);
    let bytes: Uint8Array;
    try {
      bytes = base64.decode(encoded);
    } catch {
      throw fail("a signature is not padded base64");
    }
    if (!isValidKeyName(name) || bytes.length < 5) throw fail("a signature line is malformed");
    const keyId = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
    return { name, keyId, signature: bytes.slice(4) };
  });
  return { text: body, signatures };
}

/**
 * Reads a signed note and checks its signatures against known verifiers, as
 * Go's `note.Open` does: a signature whose name and key id match no verifier
 * is unverified and ignored; one that matches must verify, or the note is
 * rejected (`invalid_signature`); a repeated signature by a known key is
 * ignored after the first; at least one must verify (`no_known_signature`).
 *
 * @throws {SyntaxError} when the note is malformed.
 * @throws {TypeError} when two verifiers share a name and a key id.
 */
export function openNote(
  message: string | Uint8Array,
  verifiers: readonly NoteVerifier[],
): OpenedNote {
  const known = new Map<string, NoteVerifier>();
  for (const verifier of verifiers) {
    const key = `${verifier.name}+${keyIdHex(verifier.keyId)}`;
    if (known.has(key)) throw new TypeError(`two verifiers are known as ${key}`);
    known.set(key, verifier);
  }
  const note = parseSignedNote(message);
  const text = new TextEncoder().encode(note.text);
  const verified: NoteSignature[] = [];
  const unverified: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const signature of note.signatures) {
    const key = `${signature.name}+${keyIdHex(signature.keyId)}`;
    const verifier = known.get(key);
    if (verifier === undefined) {
      const line = `${key}+${base64.encode(signature.signature)}`;
      if (!seen.has(line)) unverified.push(signature);
      seen.add(line);
      continue;
    }
    if (seen.has(key)) continue;
    seen.add(key);
    if (!verifier.verify(text, signature.signature)) {
      return {
        ok: false,
        error: "invalid_signature",
        name: signature.name,
        keyId: signature.keyId,
      };
    }
    verified.push(signature);
  }
  if (verified.length === 0) {
    return { ok: false, error: "no_known_signature", text: note.text, unverified };
  }
  return { ok: true, text: note.text, verified, unverified };
}

/** Strict RFC 8032 verification (zip215: false); a malformed key or signature is a plain false. */
export function verifyEd25519(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  if (signature.length !== 64) return false;
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

function assertNoteText(text: string): void {
  if (typeof text !== "string" || !text.endsWith("\n")) {
    throw new TypeError("a note's text ends in a newline");
  }
  if (text.startsWith("\n") || text.includes("\n\n")) {
    throw new TypeError("a note's text has no empty line");
  }
  if (hasControl(text, true) || LONE_SURROGATE.test(text)) {
    throw new TypeError("a note's text is UTF-8 without control characters but newline");
  }
}
