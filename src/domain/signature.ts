/**
 * Decodes a signature object of the request (`{"Ed25519": …}`, `{"Passkey": …}`
 * or `{"Multisig": …}`) into bytes and keys. Malformed input is a 400
 * `invalid_body` naming the field; nothing is verified here.
 * @module
 */

import { base58 } from "@scure/base";
import { badRequest } from "../errors.ts";
import { isEd25519PointEncoding } from "../crypto/ed25519.ts";
import { LruCache } from "../crypto/_ed25519_lru.ts";
import { decodeP256PublicKey } from "../crypto/p256.ts";
import { Ed25519Schema, MAX_MULTISIG_ENTRIES, MultisigSchema, PasskeySchema } from "./schemas.ts";
import { fieldPath, validate } from "./validate.ts";

/** An Ed25519 signature with decoded bytes. */
export interface DecodedEd25519 {
  kind: "Ed25519";
  /** The key as sent (base58). */
  keyText: string;
  /** The key that identifies the signer in a multisig: the 32 bytes, base58. */
  keyId: string;
  publicKey: Uint8Array;
  signature: Uint8Array;
  path: string;
}

/** A passkey assertion with decoded bytes. */
export interface DecodedPasskey {
  kind: "Passkey";
  keyText: string;
  /** The compressed SEC1 point, base58: keys are compared as points. */
  keyId: string;
  publicKey: Uint8Array;
  authenticatorData: Uint8Array;
  clientData: string;
  signature: Uint8Array;
  path: string;
}

/** A weighted multisig. */
export interface DecodedMultisig {
  kind: "Multisig";
  /** Signers by key id, with their key as sent and weight. */
  signers: Map<string, { keyText: string; weight: number }>;
  threshold: number;
  signatures: (DecodedEd25519 | DecodedPasskey)[];
  path: string;
}

/** Any decoded signature. */
export type DecodedSignature = DecodedEd25519 | DecodedPasskey | DecodedMultisig;

function decodeBase58(text: string, path: string): Uint8Array {
  try {
    return base58.decode(text);
  } catch {
    throw badRequest("invalid_body", `${path}: is not valid base58`);
  }
}

/** Decodes a base58 public key of either curve to its key id, or throws a 400 naming `path`. */
function keyIdOf(text: string, path: string): { keyId: string; bytes: Uint8Array } {
  const bytes = decodeBase58(text, path);
  if (bytes.length === 32) {
    if (!isEd25519PointEncoding(bytes)) {
      throw badRequest("invalid_body", `${path}: is not a valid Ed25519 public key`);
    }
    return { keyId: text, bytes }; // the text is the bytes' base58, as in decodeEd25519
  }
  if (bytes.length === 33 || bytes.length === 65) {
    try {
      return { keyId: base58.encode(decodeP256PublicKey(bytes).compressed), bytes };
    } catch {
      throw badRequest("invalid_body", `${path}: is not a valid P-256 public key`);
    }
  }
  throw badRequest(
    "invalid_body",
    `${path}: must decode to 32 bytes (Ed25519) or 33 or 65 bytes (P-256), got ${bytes.length}`,
  );
}

/**
 * Valid Ed25519 keys by their base58 text: signers submit again and again, and
 * decoding and checking a key costs more than a lookup. Bounded, so fresh keys
 * cannot grow memory; the arrays are never handed out for writing.
 */
const ed25519Keys = new LruCache<Uint8Array>(1024);

/** The 32 bytes of a base58 Ed25519 public key, checked to be a point, or a 400 naming `keyPath`. */
function decodeEd25519Key(text: string, keyPath: string): Uint8Array {
  const cached = ed25519Keys.get(text);
  if (cached !== undefined) return cached;
  const publicKey = decodeBase58(text, keyPath);
  if (publicKey.length !== 32) {
    throw badRequest(
      "invalid_body",
      `${keyPath}: must decode to 32 bytes, got ${publicKey.length}`,
    );
  }
  if (!isEd25519PointEncoding(publicKey)) {
    throw badRequest("invalid_body", `${keyPath}: is not a valid Ed25519 public key`);
  }
  ed25519Keys.set(text, publicKey);
  return publicKey;
}

function decodeEd25519(value: unknown, path: string): DecodedEd25519 {
  const body = validate(Ed25519Schema, value, path);
  const keyPath = fieldPath(path, "pub_key");
  const publicKey = decodeEd25519Key(body.pub_key, keyPath);
  const sigPath = fieldPath(path, "signature");
  const signature = decodeBase58(body.signature, sigPath);
  if (signature.length !== 64) {
    throw badRequest(
      "invalid_body",
      `${sigPath}: must decode to 64 bytes, got ${signature.length}`,
    );
  }
  return {
    kind: "Ed25519",
    keyText: body.pub_key,
    // Base58 is a bijection between strings and byte strings, so the text that
    // decoded to these 32 bytes is their encoding: no need to encode again.
    keyId: body.pub_key,
    publicKey,
    signature,
    path,
  };
}

function decodePasskey(value: unknown, path: string): DecodedPasskey {
  const body = validate(PasskeySchema, value, path);
  const keyPath = fieldPath(path, "pub_key");
  const publicKey = decodeBase58(body.pub_key, keyPath);
  if (publicKey.length !== 33 && publicKey.length !== 65) {
    throw badRequest(
      "invalid_body",
      `${keyPath}: must decode to 33 or 65 bytes (SEC1 P-256), got ${publicKey.length}`,
    );
  }
  let compressed: Uint8Array;
  try {
    compressed = decodeP256PublicKey(publicKey).compressed;
  } catch {
    throw badRequest("invalid_body", `${keyPath}: is not a valid P-256 public key`);
  }
  return {
    kind: "Passkey",
    keyText: body.pub_key,
    keyId: base58.encode(compressed),
    publicKey,
    authenticatorData: decodeBase58(body.authenticator_data, fieldPath(path, "authenticator_data")),
    clientData: body.client_data,
    signature: decodeBase58(body.signature, fieldPath(path, "signature")),
    path,
  };
}

function decodeMultisig(value: unknown, path: string): DecodedMultisig {
  const body = validate(MultisigSchema, value, path);
  const signersPath = fieldPath(path, "pub_key", "signers");
  const signers = new Map<string, { keyText: string; weight: number }>();
  for (const [keyText, weight] of Object.entries(body.pub_key.signers)) {
    const { keyId } = keyIdOf(keyText, fieldPath(signersPath, keyText));
    if (signers.has(keyId)) {
      throw badRequest(
        "invalid_body",
        `${fieldPath(signersPath, keyText)}: names the same key as another signer`,
      );
    }
    signers.set(keyId, { keyText, weight });
  }
  const signatures = body.signatures.map((entry, i) => {
    const entryPath = fieldPath(path, "signatures", i);
    const decoded = decodeSignature(entry, entryPath, { nested: true });
    return decoded as DecodedEd25519 | DecodedPasskey;
  });
  if (signatures.length > MAX_MULTISIG_ENTRIES) {
    throw badRequest("invalid_body", `${fieldPath(path, "signatures")}: too many entries`);
  }
  return { kind: "Multisig", signers, threshold: body.pub_key.threshold, signatures, path };
}

/**
 * Decodes a signature object.
 *
 * @param value the object that names one signature kind.
 * @param path its place in the body, e.g. `"signature"` or `"authorship.Signed"`.
 * @param options.nested true inside a multisig, where `Multisig` is refused.
 * @throws {ServiceError} 400 `invalid_body` naming the field.
 */
export function decodeSignature(
  value: unknown,
  path: string,
  options: { nested?: boolean } = {},
): DecodedSignature {
  const kinds = options.nested ? "Ed25519 or Passkey" : "Ed25519, Passkey or Multisig";
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest("invalid_body", `${path}: expected an object naming one of ${kinds}`);
  }
  const members = Object.keys(value);
  if (members.length !== 1) {
    throw badRequest("invalid_body", `${path}: must have exactly one member, one of ${kinds}`);
  }
  const [kind] = members;
  const inner = (value as Record<string, unknown>)[kind];
  const innerPath = fieldPath(path, kind);
  switch (kind) {
    case "Ed25519":
      return decodeEd25519(inner, innerPath);
    case "Passkey":
      return decodePasskey(inner, innerPath);
    case "Multisig":
      if (options.nested) {
        throw badRequest("invalid_body", `${innerPath}: a Multisig cannot be nested in a Multisig`);
      }
      return decodeMultisig(inner, innerPath);
    default:
      throw badRequest(
        "invalid_body",
        `${fieldPath(path, kind)}: unknown signature kind, expected ${kinds}`,
      );
  }
}
