/**
 * Decodes a signature object of the request (`{"Ed25519": …}`, `{"Passkey": …}`
 * or `{"Multisig": …}`) into bytes and keys. Malformed input is refused
 * with `invalid_body` naming the field; nothing is verified here.
 * @module
 */

import { ServiceError } from "../errors.ts";
import type { Ed25519PublicKey } from "../crypto/ed25519.ts";
import type { P256PublicKey } from "../crypto/p256.ts";
import {
  decodeBase58,
  type DecodedKey,
  decodePublicKey,
  decodeSigners,
  type PublicKeyCache,
} from "./public_keys.ts";
import type { Signers } from "./intent.ts";
import { Ed25519Schema, MultisigSchema, PasskeySchema } from "./schemas.ts";
import { fieldPath, validate } from "./validate.ts";

/** An Ed25519 signature with decoded bytes. */
export interface DecodedEd25519 {
  kind: "Ed25519";
  /** The key as sent (base58). */
  keyText: string;
  /** The key that identifies the signer in a multisig: the 32 bytes, base58. */
  keyId: string;
  publicKey: Ed25519PublicKey;
  signature: Uint8Array;
  path: string;
}

/** A passkey assertion with decoded bytes. */
export interface DecodedPasskey {
  kind: "Passkey";
  keyText: string;
  /** The compressed SEC1 point, base58: keys are compared as points. */
  keyId: string;
  publicKey: P256PublicKey;
  authenticatorData: Uint8Array;
  clientData: string;
  signature: Uint8Array;
  path: string;
}

/** A weighted multisig. */
export interface DecodedMultisig {
  kind: "Multisig";
  /** Signers by key id, with their key as sent and weight. */
  signers: Signers;
  /**
   * The signers' decoded keys by key id, their subgroup not yet checked:
   * verification checks each Ed25519 one once its signature verified.
   */
  keys: Map<string, DecodedKey>;
  threshold: number;
  signatures: (DecodedEd25519 | DecodedPasskey)[];
  path: string;
}

/** Any decoded signature. */
export type DecodedSignature = DecodedEd25519 | DecodedPasskey | DecodedMultisig;

function decodeEd25519(value: unknown, path: string, keys?: PublicKeyCache): DecodedEd25519 {
  const body = validate(Ed25519Schema, value, path);
  const key = decodePublicKey(body.pub_key, fieldPath(path, "pub_key"), "ed25519", keys);
  const sigPath = fieldPath(path, "signature");
  const signature = decodeBase58(body.signature, sigPath);
  if (signature.length !== 64) {
    throw new ServiceError(
      "invalid_body",
      `${sigPath}: must decode to 64 bytes, got ${signature.length}`,
    );
  }
  return {
    kind: "Ed25519",
    keyText: body.pub_key,
    keyId: key.id,
    publicKey: key.key,
    signature,
    path,
  };
}

function decodePasskey(value: unknown, path: string, keys?: PublicKeyCache): DecodedPasskey {
  const body = validate(PasskeySchema, value, path);
  const key = decodePublicKey(body.pub_key, fieldPath(path, "pub_key"), "p256", keys);
  return {
    kind: "Passkey",
    keyText: body.pub_key,
    keyId: key.id,
    publicKey: key.key,
    authenticatorData: decodeBase58(body.authenticator_data, fieldPath(path, "authenticator_data")),
    clientData: body.client_data,
    signature: decodeBase58(body.signature, fieldPath(path, "signature")),
    path,
  };
}

function decodeMultisig(value: unknown, path: string, keys?: PublicKeyCache): DecodedMultisig {
  const body = validate(MultisigSchema, value, path);
  const signerKeys = new Map<string, DecodedKey>();
  const signers = decodeSigners(body.pub_key.signers, {
    path: fieldPath(path, "pub_key", "signers"),
    cache: keys,
    keys: signerKeys,
  });
  const signatures = body.signatures.map((entry, i) => {
    const entryPath = fieldPath(path, "signatures", i);
    const decoded = decodeSignature(entry, entryPath, { nested: true, keys });
    return decoded as DecodedEd25519 | DecodedPasskey;
  });
  return {
    kind: "Multisig",
    signers,
    keys: signerKeys,
    threshold: body.pub_key.threshold,
    signatures,
    path,
  };
}

/**
 * The verification work a signature asks for, in the units of the address
 * budget (docs/interface.md §12): max(1, signatures carried, public keys
 * named). A Multisig names the keys of its signers and of its entries
 * (counted once each), whatever it carries; no signature (`Unsigned`) is 1.
 *
 * @example
 * ```ts
 * workOf(null); // 1
 * ```
 */
export function workOf(signature: DecodedSignature | null): number {
  if (signature === null || signature.kind !== "Multisig") return 1;
  const keys = new Set(signature.signers.keys());
  for (const entry of signature.signatures) keys.add(entry.keyId);
  return Math.max(1, signature.signatures.length, keys.size);
}

/**
 * Decodes a signature object.
 *
 * @param value the object that names one signature kind.
 * @param path its place in the body, e.g. `"signature"` or `"authorship.Signed"`.
 * @param options.nested true inside a multisig, where `Multisig` is refused.
 * @param options.keys where decoded public keys are kept (the verify context's).
 * @throws {ServiceError} `invalid_body` naming the field.
 */
export function decodeSignature(
  value: unknown,
  path: string,
  options: { nested?: boolean; keys?: PublicKeyCache } = {},
): DecodedSignature {
  const kinds = options.nested ? "Ed25519 or Passkey" : "Ed25519, Passkey or Multisig";
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ServiceError("invalid_body", `${path}: expected an object naming one of ${kinds}`);
  }
  const members = Object.keys(value);
  if (members.length !== 1) {
    throw new ServiceError(
      "invalid_body",
      `${path}: must have exactly one member, one of ${kinds}`,
    );
  }
  const [kind] = members;
  const inner = (value as Record<string, unknown>)[kind];
  const innerPath = fieldPath(path, kind);
  switch (kind) {
    case "Ed25519":
      return decodeEd25519(inner, innerPath, options.keys);
    case "Passkey":
      return decodePasskey(inner, innerPath, options.keys);
    case "Multisig":
      if (options.nested) {
        throw new ServiceError(
          "invalid_body",
          `${innerPath}: a Multisig cannot be nested in a Multisig`,
        );
      }
      return decodeMultisig(inner, innerPath, options.keys);
    default:
      throw new ServiceError(
        "invalid_body",
        `${fieldPath(path, kind)}: unknown signature kind, expected ${kinds}`,
      );
  }
}
