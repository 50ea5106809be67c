/**
 * Passkey signatures from WebAuthn assertions: the Passkey member from what
 * `navigator.credentials.get` hands back, and an {@link ApprovalSigner} that
 * asks the browser for that assertion.
 * @module
 */

import { base58, hex } from "@scure/base";
import type { ApprovalSigner } from "./approvals.ts";
import type { PasskeySignature } from "@intents/protocol/types";

// DER prefix of a P-256 SubjectPublicKeyInfo (RFC 5480): what
// AuthenticatorAttestationResponse.getPublicKey() returns, followed by the 65-byte point.
const P256_SPKI_PREFIX = "3059301306072a8648ce3d020106082a8648ce3d030107034200";

/** The SEC1 uncompressed point of a P-256 SPKI public key (from `getPublicKey()`). */
export function p256PointFromSpki(spki: Uint8Array): Uint8Array {
  // The point after the prefix must be uncompressed (0x04), as SPKI from WebAuthn always is.
  if (
    spki.length !== 91 || hex.encode(spki.subarray(0, 26)) !== P256_SPKI_PREFIX || spki[26] !== 4
  ) {
    throw new TypeError("expected a P-256 SubjectPublicKeyInfo (91 bytes)");
  }
  return spki.slice(26);
}

/** What a WebAuthn assertion gives: `AuthenticatorAssertionResponse` fields, as bytes. */
export interface WebAuthnAssertion {
  /** `response.authenticatorData`. */
  authenticatorData: Uint8Array;
  /** `response.clientDataJSON`, exactly as the browser made it. */
  clientDataJSON: Uint8Array;
  /** The DER signature, as the authenticator emitted it. */
  signature: Uint8Array;
  /** The credential's public key: SPKI (from registration's `getPublicKey()`) or a SEC1 point. */
  publicKey: Uint8Array;
}

/** Assembles a Passkey signature member from a WebAuthn assertion. */
export function passkeySignature(assertion: WebAuthnAssertion): PasskeySignature {
  const key = assertion.publicKey.length === 91
    ? p256PointFromSpki(assertion.publicKey)
    : assertion.publicKey;
  return {
    Passkey: {
      authenticator_data: base58.encode(assertion.authenticatorData),
      client_data: new TextDecoder("utf-8", { fatal: true }).decode(assertion.clientDataJSON),
      pub_key: base58.encode(key),
      signature: base58.encode(assertion.signature),
    },
  };
}

/** The part of `navigator.credentials` a {@link webAuthnSigner} uses. */
export interface WebAuthnCredentials {
  /** `navigator.credentials.get`: resolves with a `PublicKeyCredential`. */
  get(options: {
    publicKey: {
      challenge: Uint8Array;
      rpId?: string;
      allowCredentials?: { type: "public-key"; id: Uint8Array }[];
      userVerification?: "required" | "preferred" | "discouraged";
      timeout?: number;
    };
  }): Promise<unknown>;
}

/** Options of {@link webAuthnSigner}. */
export interface WebAuthnSignerOptions {
  /**
   * The passkey's public key: the SPKI its registration's `getPublicKey()`
   * gave (kept by the page, since assertions do not carry it) or its SEC1 point.
   */
  publicKey: Uint8Array;
  /** The credential's `rawId`: asks for this passkey only. Absent: the person picks one. */
  credentialId?: Uint8Array;
  /** Relying-party id; absent: the page's host, as the browser defaults. */
  rpId?: string;
  /** Default `preferred`. */
  userVerification?: "required" | "preferred" | "discouraged";
  /** Milliseconds the browser waits for the person. */
  timeout?: number;
  /** Where assertions come from; default `navigator.credentials`. */
  credentials?: WebAuthnCredentials;
}

function bytesOf(value: unknown, name: string): Uint8Array {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  throw new TypeError(`the assertion has no ${name}`);
}

/**
 * An approval signer that asks the browser's authenticator for an assertion
 * over the request's challenge and assembles the Passkey member.
 *
 * @throws {TypeError} (when signing) where there is no `navigator.credentials`
 *   and no `credentials` was given, or the browser answers without an assertion.
 * @example
 * ```ts
 * // In a browser, with the passkey's SPKI and raw id kept from its registration;
 * // then `new IntentsClient({ url: location.origin }).approve(id, signer)`.
 * function signerOf(spki: Uint8Array, rawId: Uint8Array) {
 *   return webAuthnSigner({ publicKey: spki, credentialId: rawId });
 * }
 * ```
 */
export function webAuthnSigner(options: WebAuthnSignerOptions): ApprovalSigner {
  return async (request) => {
    const credentials = options.credentials ??
      (globalThis.navigator as { credentials?: WebAuthnCredentials } | undefined)?.credentials;
    if (!credentials) throw new TypeError("no navigator.credentials: not in a browser");
    const credential = await credentials.get({
      publicKey: {
        challenge: request.challenge,
        ...(options.rpId === undefined ? {} : { rpId: options.rpId }),
        ...(options.credentialId === undefined
          ? {}
          : { allowCredentials: [{ type: "public-key" as const, id: options.credentialId }] }),
        userVerification: options.userVerification ?? "preferred",
        ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
      },
    });
    const response = (credential as { response?: Record<string, unknown> } | null)?.response;
    if (!response) throw new TypeError("the authenticator gave no assertion");
    return passkeySignature({
      authenticatorData: bytesOf(response.authenticatorData, "authenticatorData"),
      clientDataJSON: bytesOf(response.clientDataJSON, "clientDataJSON"),
      signature: bytesOf(response.signature, "signature"),
      publicKey: options.publicKey,
    });
  };
}
