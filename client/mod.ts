/**
 * Client library for the intent submission service: keys, signing (Variant A
 * and B, Ed25519, passkey, multisig) and typed calls. It runs in Deno, Node
 * and browsers: it uses Web Crypto, `fetch` and small pure npm packages only.
 *
 * It signs exactly the bytes the server verifies: UTF-8 of the RFC 8785 (JCS)
 * text of `payload` (Variant A) or `intent` (Variant B), written by the wire
 * protocol's module (`@intents/protocol`), which the server uses too.
 *
 * Under a governed document a submission may be stored `pending`; each
 * further signer approves with `approve(id, key or signer)`, which signs the
 * bytes of the intent's approvals view after checking its challenge, or
 * says no with `reject(id, key or signer)`, which signs its rejection bytes.
 *
 * @example
 * ```ts
 * import {
 *   type Ed25519Key,
 *   generateEd25519Key,
 *   IntentsClient,
 *   newIntentId,
 *   signVariantB,
 * } from "./mod.ts";
 *
 * async function submitAndApprove(policyId: string, otherKey: Ed25519Key): Promise<void> {
 *   const key = generateEd25519Key();
 *   const body = signVariantB({ id: newIntentId(), policy_id: policyId }, key);
 *   const client = new IntentsClient({ url: "http://localhost:8000" });
 *   const record = await client.submit(body); // record.state: "accepted" or "pending"
 *   if (record.state === "pending") await client.approve(record.id, otherKey);
 * }
 * ```
 * @module
 */

import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { canonicalBytes } from "@intents/protocol/jcs";
import { signedBytes } from "@intents/protocol/signed";
import type {
  ApprovalsView,
  Ed25519Signature,
  Intent,
  MultisigSignature,
  PasskeySignature,
  Payload,
  Signature,
  VariantABody,
  VariantBBody,
} from "@intents/protocol/types";
import type { ApprovalSigner } from "./approvals.ts";
import { type ApproveOptions, IntentsClient as BaseClient } from "./client.ts";

export { canonicalBytes };
export { newIntentId } from "./ids.ts";
export {
  type ApproveOptions,
  type ClientOptions,
  type EventsOptions,
  IntentsError,
} from "./client.ts";
export {
  type ApprovalRequest,
  approvalRequest,
  type ApprovalSigner,
  rejectionRequest,
} from "./approvals.ts";
export {
  type AppliedRule,
  appliedRules,
  type DocumentReader,
  type DocumentRule,
  ruleEffect,
} from "./applied_rules.ts";
export { governedDocument, type GovernedDocumentOptions } from "./governed_document.ts";
export {
  p256PointFromSpki,
  passkeySignature,
  type WebAuthnAssertion,
  type WebAuthnCredentials,
  webAuthnSigner,
  type WebAuthnSignerOptions,
} from "./passkey.ts";
export {
  passkeyChallenge,
  passkeyChallengeBytes,
  REJECTION_PREFIX,
  rejectionBytes,
  signedBytes,
} from "@intents/protocol/signed";
export {
  type VerifiedWebhook,
  verifyWebhook,
  type VerifyWebhookOptions,
  type WebhookHeaders,
  type WebhookVerificationCode,
  WebhookVerificationError,
} from "@intents/protocol/webhook_verify";
export * from "./webhook_admin.ts";
export { type LogVerificationCode, LogVerificationError } from "./errors.ts";
export * from "./log.ts";
export * from "./log_monitor.ts";
export * from "./log_audit.ts";
export {
  type Checkpoint,
  type CheckpointError,
  type CheckpointPolicy,
  type CheckpointVerdict,
  type Cosigned,
  entryBytes,
  generateNoteKey,
  type HashReader,
  leafHash,
  type Tile,
  type TlogProofClaim,
  type TlogProofError,
  type TlogProofVerdict,
  type TreeNode,
  verifyCheckpoint,
  verifyTlogProof,
} from "@intents/protocol/log";
export type * from "@intents/protocol/types";

/** An Ed25519 key pair; `secretKey` is the 32-byte seed. */
export interface Ed25519Key {
  /** The 32-byte seed: keep it secret. */
  secretKey: Uint8Array;
  /** The 32-byte public key. */
  publicKey: Uint8Array;
}

/** A key file as the CLI writes it: base58 seed and public key. */
export interface Ed25519KeyFile {
  /** Always `Ed25519`. */
  kind: "Ed25519";
  /** The seed, base58. */
  secret_key: string;
  /** The public key, base58. */
  public_key: string;
}

/** Makes a new Ed25519 key pair. */
export function generateEd25519Key(): Ed25519Key {
  const secretKey = ed25519.utils.randomSecretKey();
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}

/** Rebuilds a key pair from its 32-byte seed. */
export function ed25519KeyFromSecret(secretKey: Uint8Array): Ed25519Key {
  if (secretKey.length !== 32) throw new RangeError("an Ed25519 secret key is 32 bytes");
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}

/** The key file form of a key pair. */
export function toKeyFile(key: Ed25519Key): Ed25519KeyFile {
  return {
    kind: "Ed25519",
    secret_key: base58.encode(key.secretKey),
    public_key: base58.encode(key.publicKey),
  };
}

/**
 * Reads a key file.
 *
 * @throws {TypeError} when it is not an Ed25519 key file or its keys do not match.
 */
export function fromKeyFile(file: unknown): Ed25519Key {
  const f = file as Partial<Ed25519KeyFile>;
  if (typeof f !== "object" || f === null || typeof f.secret_key !== "string") {
    throw new TypeError("not a key file: expected {kind, secret_key, public_key}");
  }
  if (f.kind !== undefined && f.kind !== "Ed25519") {
    throw new TypeError("key file: kind must be Ed25519");
  }
  let secret: Uint8Array;
  try {
    secret = base58.decode(f.secret_key);
  } catch {
    throw new TypeError("key file: secret_key is not base58");
  }
  const key = ed25519KeyFromSecret(secret);
  if (f.public_key !== undefined && f.public_key !== base58.encode(key.publicKey)) {
    throw new TypeError("key file: public_key does not belong to secret_key");
  }
  return key;
}

/** An Ed25519 signature member over signed bytes. */
function signBytes(bytes: Uint8Array, key: Ed25519Key): Ed25519Signature {
  const signature = ed25519.sign(bytes, key.secretKey);
  return {
    Ed25519: { pub_key: base58.encode(key.publicKey), signature: base58.encode(signature) },
  };
}

/** An Ed25519 signature member over `value`. */
export function ed25519Signature(value: Payload | Intent, key: Ed25519Key): Ed25519Signature {
  return signBytes(signedBytes(value), key);
}

/** A signer (of approvals and rejections) that signs the request's checked bytes with an Ed25519 key. */
export function ed25519Signer(key: Ed25519Key): ApprovalSigner {
  return (request) => signBytes(request.bytes, key);
}

/**
 * Typed calls to the service (see `client.ts`); {@link IntentsClient.approve}
 * and {@link IntentsClient.reject} here also take an Ed25519 key. (The
 * browser bundle's client, which leaves Ed25519 out, takes signer functions
 * only.)
 */
export class IntentsClient extends BaseClient {
  /**
   * `POST /intents/{id}/approvals` with one signature over the intent's signed bytes.
   *
   * @param signer an Ed25519 key, or a signer function (e.g. a passkey's, see `webAuthnSigner`).
   * @param options.view the view already read, to sign what was shown.
   */
  override approve(
    id: string,
    signer: Ed25519Key | ApprovalSigner,
    options: ApproveOptions = {},
  ): Promise<ApprovalsView> {
    const sign = typeof signer === "function" ? signer : ed25519Signer(signer);
    return super.approve(id, sign, options);
  }

  /**
   * `POST /intents/{id}/rejections` with one signature over the intent's rejection bytes.
   *
   * @param signer an Ed25519 key, or a signer function (e.g. a passkey's, see `webAuthnSigner`).
   * @param options.view the view already read, to sign what was shown.
   */
  override reject(
    id: string,
    signer: Ed25519Key | ApprovalSigner,
    options: ApproveOptions = {},
  ): Promise<ApprovalsView> {
    const sign = typeof signer === "function" ? signer : ed25519Signer(signer);
    return super.reject(id, sign, options);
  }
}

/** A Variant A body signed with an Ed25519 key. */
export function signVariantA(payload: Payload, key: Ed25519Key): VariantABody {
  return { payload, signature: ed25519Signature(payload, key) };
}

/** A Variant B body signed with an Ed25519 key. */
export function signVariantB(intent: Intent, key: Ed25519Key): VariantBBody {
  return { authorship: { Signed: ed25519Signature(intent, key) }, intent };
}

/** A Variant A body from a payload and any signature (e.g. a passkey or multisig). */
export function variantABody(payload: Payload, signature: Signature): VariantABody {
  return { payload, signature };
}

/** A Variant B body from an intent and any signature (e.g. a passkey or multisig). */
export function variantBBody(intent: Intent, signature: Signature): VariantBBody {
  return { authorship: { Signed: signature }, intent };
}

/** A Variant B body with `Unsigned` authorship (accepted only where the operator allows it). */
export function unsignedVariantB(intent: Intent): VariantBBody {
  return { authorship: "Unsigned", intent };
}

/**
 * Assembles a Multisig signature.
 *
 * @param options.signers base58 public keys with their weights.
 * @param options.threshold the weight the signers who signed must reach.
 * @param options.signatures Ed25519 or Passkey signatures over the same bytes.
 */
export function multisigSignature(options: {
  signers: Record<string, number>;
  threshold: number;
  signatures: (Ed25519Signature | PasskeySignature)[];
}): MultisigSignature {
  return {
    Multisig: {
      pub_key: { signers: options.signers, threshold: options.threshold },
      signatures: options.signatures,
    },
  };
}
