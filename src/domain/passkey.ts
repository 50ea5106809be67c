/**
 * WebAuthn assertion verification for the `Passkey` signature kind (docs/interface.md §4,
 * WebAuthn Level 3 §7.2 "Verifying an Authentication Assertion", the parts that
 * apply to a signature over caller-chosen bytes).
 *
 * Pure: bytes and a policy in, a verdict out. Failures carry a reason that names
 * the failed check and never echoes the input.
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { challengeText } from "@intents/protocol/signed";
import { parseDerEcdsaSignature } from "../crypto/der.ts";
import { P256PublicKey, verifyP256 } from "../crypto/p256.ts";
import { AuthenticatorDataError, parseAuthenticatorData } from "./authenticator_data.ts";
import { parseStrictJson, StrictJsonError } from "./strict_json.ts";

/** Which relying parties and origins are accepted, and whether user verification is required. */
export interface PasskeyPolicy {
  /** Relying-party ids whose SHA-256 may start the authenticator data. */
  rpIds: readonly string[];
  /** Exact origins accepted in the client data. */
  origins: readonly string[];
  /** Whether the user-verified flag (0x04) must be set. */
  requireUserVerification: boolean;
  /**
   * SHA-256 of each of `rpIds`, in order, made once by {@link withRpIdHashes};
   * when absent each verification hashes them again.
   */
  rpIdHashes?: readonly Uint8Array[];
}

/** One decoded WebAuthn assertion. */
export interface PasskeyAssertion {
  /** Authenticator data: rpIdHash (32) ‖ flags (1) ‖ signCount (4) ‖ extensions when flagged. */
  authenticatorData: Uint8Array;
  /** The client data JSON text, exactly as the client sent it. */
  clientData: string;
  /** The public key: decoded, or a SEC1 P-256 point (compressed or uncompressed). */
  publicKey: P256PublicKey | Uint8Array;
  /** ECDSA signature in ASN.1 DER. */
  signature: Uint8Array;
}

/** The outcome of {@link verifyPasskey}; `reason` is safe to show to the client. */
export type PasskeyVerdict = { ok: true } | { ok: false; reason: string };

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

const encoder = new TextEncoder();

/** SHA-256 of each accepted rp id. */
function rpIdHashes(rpIds: readonly string[]): Uint8Array[] {
  return rpIds.map((rpId) => sha256(encoder.encode(rpId)));
}

/**
 * The policy with its relying parties' hashes made once, for a policy that
 * verifies many assertions (see {@link PasskeyPolicy.rpIdHashes}).
 *
 * @example
 * ```ts
 * const policy = withRpIdHashes({
 *   rpIds: ["localhost"],
 *   origins: ["http://localhost:8000"],
 *   requireUserVerification: false,
 * });
 * policy.rpIdHashes?.length; // 1
 * ```
 */
export function withRpIdHashes(policy: PasskeyPolicy): PasskeyPolicy {
  return { ...policy, rpIdHashes: rpIdHashes(policy.rpIds) };
}

function startsWith(data: Uint8Array, prefix: Uint8Array): boolean {
  for (let i = 0; i < prefix.length; i++) {
    if (data[i] !== prefix[i]) return false;
  }
  return true;
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * Checks the client data members; returns a failure reason or `null`.
 *
 * Read by the strict reader of request bodies: with `JSON.parse` a second
 * `"type"`, `"origin"` or `"crossOrigin"` member would silently win over the
 * first, so two readers of the same signed bytes could see different values.
 */
function checkClientData(
  clientDataBytes: Uint8Array,
  challenge: string,
  policy: PasskeyPolicy,
): string | null {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(clientDataBytes);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    return `client data is not strict JSON: ${error.reason} at byte ${error.offset}`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return "client data is not a JSON object";
  }
  const data = parsed as Record<string, unknown>;
  if (data.type !== "webauthn.get") return "client data type is not webauthn.get";
  if (data.challenge !== challenge) return "client data challenge does not match the signed bytes";
  if (typeof data.origin !== "string" || !policy.origins.includes(data.origin)) {
    return "client data origin is not accepted";
  }
  // Absent and false mean a same-origin ceremony; anything else is not accepted.
  if (Object.hasOwn(data, "crossOrigin")) {
    if (typeof data.crossOrigin !== "boolean") return "client data crossOrigin is not a boolean";
    if (data.crossOrigin) return "client data crossOrigin is true";
  }
  // Only a ceremony in a cross-origin frame has a top origin; such ceremonies are refused.
  if (Object.hasOwn(data, "topOrigin")) return "client data has a topOrigin member";
  return null;
}

/**
 * An assertion whose cheap checks passed (see {@link precheckPasskey}): the
 * key and the bytes its ECDSA signature must verify over.
 */
export interface PrecheckedPasskey {
  ok: true;
  publicKey: P256PublicKey | Uint8Array;
  /** `authenticatorData ‖ SHA-256(client data bytes)`. */
  message: Uint8Array;
  signature: Uint8Array;
}

/**
 * The checks of an assertion that need no ECDSA: the shapes of the inputs;
 * the authenticator data's layout by its flags (37 bytes, or with ED one CBOR
 * map of extensions; never AT), its rpIdHash, the user-present and (when
 * required) user-verified flags; the client data read as strict JSON (no
 * duplicate member), its `type`, `challenge`, `origin`, `crossOrigin` and the
 * absence of `topOrigin`; strict DER with `r`, `s` in range. They cost
 * microseconds where the ECDSA costs a fraction of a millisecond, so a
 * verifier makes them first, for every assertion of a request, and a refused
 * one never pays for an ECDSA (docs/interface.md §4).
 *
 * @param assertion the decoded assertion.
 * @param signedBytes the bytes the client signed.
 * @param policy accepted rp ids and origins, and whether user verification is required.
 * @param challenge the wire protocol's `challengeText` of `signedBytes`, when the caller made
 *   it already.
 * @returns the key, message and signature for {@link verifyPrechecked}, or
 *   `{ ok: false, reason }`. Never throws for hostile input.
 */
export function precheckPasskey(
  assertion: PasskeyAssertion,
  signedBytes: Uint8Array,
  policy: PasskeyPolicy,
  challenge?: string,
): PrecheckedPasskey | { ok: false; reason: string } {
  try {
    const { authenticatorData, clientData, publicKey, signature } = assertion ?? {};
    if (!(authenticatorData instanceof Uint8Array)) return fail("authenticator data is not bytes");
    if (typeof clientData !== "string") return fail("client data is not a string");
    if (!(publicKey instanceof Uint8Array) && !(publicKey instanceof P256PublicKey)) {
      return fail("public key is not bytes");
    }
    if (!(signature instanceof Uint8Array)) return fail("signature is not bytes");
    if (!(signedBytes instanceof Uint8Array)) return fail("signed bytes are not bytes");

    let flags: number;
    try {
      ({ flags } = parseAuthenticatorData(authenticatorData));
    } catch (error) {
      if (error instanceof AuthenticatorDataError) return fail(error.message);
      throw error;
    }
    const hashes = policy.rpIdHashes ?? rpIdHashes(policy.rpIds);
    if (!hashes.some((hash) => startsWith(authenticatorData, hash))) {
      return fail("authenticator data rpIdHash matches no accepted relying party");
    }
    if ((flags & FLAG_USER_PRESENT) === 0) return fail("user presence flag is not set");
    if (policy.requireUserVerification && (flags & FLAG_USER_VERIFIED) === 0) {
      return fail("user verification flag is not set");
    }

    const clientDataBytes = encoder.encode(clientData);
    const clientDataFailure = checkClientData(
      clientDataBytes,
      challenge ?? challengeText(signedBytes),
      policy,
    );
    if (clientDataFailure) return fail(clientDataFailure);

    try {
      parseDerEcdsaSignature(signature);
    } catch (error) {
      return fail(
        error instanceof RangeError
          ? "signature r or s is out of range"
          : "signature is not strict DER",
      );
    }

    // WebAuthn §7.2 steps 19–20: the signature covers authData ‖ SHA-256(clientDataJSON bytes).
    // Hashed here, not by Web Crypto: a Web Crypto digest is handed to a thread
    // pool, which costs more than hashing a few hundred bytes.
    const clientDataHash = sha256(clientDataBytes);
    const message = new Uint8Array(authenticatorData.length + clientDataHash.length);
    message.set(authenticatorData, 0);
    message.set(clientDataHash, authenticatorData.length);
    return { ok: true, publicKey, message, signature };
  } catch {
    // Every expected failure returns a reason below; this only keeps the "never throws" promise.
    return { ok: false, reason: "passkey assertion could not be verified" };
  }
}

/**
 * The ECDSA P-256 / SHA-256 check of an assertion whose cheap checks passed.
 *
 * @returns `{ ok: true }`, or `{ ok: false, reason }`. Never throws for hostile input.
 */
export async function verifyPrechecked(prepared: PrecheckedPasskey): Promise<PasskeyVerdict> {
  let verified: boolean;
  try {
    verified = await verifyP256(prepared.publicKey, prepared.message, prepared.signature);
  } catch (error) {
    // verifyP256 throws only for an invalid key; it decodes once and then serves from its cache.
    if (error instanceof RangeError) return fail("public key is not a valid P-256 point");
    return fail("passkey assertion could not be verified");
  }
  return verified ? { ok: true } : fail("signature does not verify");
}

/**
 * Verifies a WebAuthn assertion over `signedBytes`: {@link precheckPasskey},
 * then the public key and the ECDSA P-256 / SHA-256 signature over
 * `authenticatorData ‖ SHA-256(UTF-8 of clientData)`. High-S signatures are accepted.
 *
 * The client data is hashed as the exact bytes received, never re-serialised, so
 * members a browser adds (e.g. `other_keys_can_be_added_here`) do not matter.
 *
 * @param assertion the decoded assertion.
 * @param signedBytes the bytes the client signed (UTF-8 of the JCS text).
 * @param policy accepted rp ids and origins, and whether user verification is required.
 * @returns `{ ok: true }`, or `{ ok: false, reason }` naming the failed check. Never throws
 * for hostile input.
 *
 * @example
 * ```ts
 * import { p256 } from "@noble/curves/nist.js";
 * import { sha256 } from "@noble/hashes/sha2.js";
 * import { challengeText } from "@intents/protocol/signed";
 *
 * const utf8 = new TextEncoder();
 * const signedBytes = utf8.encode('{"id":"order-1","template_id":"t"}');
 * // What a browser and an authenticator make for `navigator.credentials.get`:
 * const authenticatorData = new Uint8Array(37);
 * authenticatorData.set(sha256(utf8.encode("localhost")));
 * authenticatorData[32] = 0x01; // user present
 * const clientData = JSON.stringify({
 *   type: "webauthn.get",
 *   challenge: challengeText(signedBytes),
 *   origin: "http://localhost:8000",
 * });
 * const secretKey = p256.utils.randomSecretKey();
 * const message = new Uint8Array([...authenticatorData, ...sha256(utf8.encode(clientData))]);
 * const signature = p256.sign(message, secretKey, { prehash: true, lowS: false, format: "der" });
 *
 * const verdict = await verifyPasskey(
 *   { authenticatorData, clientData, publicKey: p256.getPublicKey(secretKey), signature },
 *   signedBytes,
 *   { rpIds: ["localhost"], origins: ["http://localhost:8000"], requireUserVerification: false },
 * );
 * verdict; // { ok: true }
 * ```
 */
export async function verifyPasskey(
  assertion: PasskeyAssertion,
  signedBytes: Uint8Array,
  policy: PasskeyPolicy,
): Promise<PasskeyVerdict> {
  const prepared = precheckPasskey(assertion, signedBytes, policy);
  return prepared.ok ? await verifyPrechecked(prepared) : prepared;
}
