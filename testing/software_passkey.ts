/**
 * A software WebAuthn authenticator for the tests and the load tools: a Web
 * Crypto P-256 key pair that produces `Passkey` signature bodies the way a
 * browser and authenticator would, with knobs to produce each kind of invalid
 * assertion.
 * @module
 */

import { p256 } from "@noble/curves/nist.js";
import { base58 } from "@scure/base";
import { encodeDerEcdsaSignature } from "../src/crypto/der.ts";
import { challengeText } from "@intents/protocol/signed";

/** Options of {@link SoftwarePasskey.assert}; every default gives a valid assertion. */
export interface AssertOptions {
  /** Client data `origin`; default `http://localhost:8000`. */
  origin?: string;
  /** Relying-party id hashed into the authenticator data; default `localhost`. */
  rpId?: string;
  /** Client data `type`; default `webauthn.get`. */
  type?: string;
  /**
   * Client data `crossOrigin`; default `false`, as browsers send it. Passing the
   * member with the value `undefined` leaves it out of the client data.
   */
  crossOrigin?: unknown;
  /** Authenticator data flags; default 0x05 (user present, user verified). */
  flags?: number;
  /** Client data `challenge` instead of the correct one. */
  challenge?: string;
  /** Members appended to the client data, as Chromium sometimes does. */
  extraClientData?: Record<string, unknown>;
  /** Signature counter in the authenticator data; default 0. */
  signCount?: number;
  /** Force s > n/2. */
  highS?: boolean;
  /** Force s <= n/2. */
  lowS?: boolean;
  /**
   * The client data text itself, made from the correct challenge; replaces
   * `type`, `origin`, `crossOrigin` and `extraClientData`. For texts
   * `JSON.stringify` cannot write, such as a member given twice.
   */
  clientDataText?: (challenge: string) => string;
  /** Bytes appended to the 37 bytes of authenticator data (set `flags` to match). */
  authenticatorDataTail?: Uint8Array;
}

/** A `Passkey` signature member body: base58 binary fields, `client_data` as its JSON text. */
export interface PasskeySignatureBody {
  authenticator_data: string;
  client_data: string;
  pub_key: string;
  signature: string;
}

const N = p256.Point.CURVE().n;
const HALF_N = N >> 1n;
const encoder = new TextEncoder();

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function bigIntTo32Bytes(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    bytes[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return bytes;
}

/** A P-256 passkey held in memory. */
export class SoftwarePasskey {
  private constructor(
    private readonly privateKey: CryptoKey,
    /** SEC1 public key: compressed if created so, else 65-byte uncompressed. */
    readonly publicKey: Uint8Array,
  ) {}

  /** Makes a fresh Web Crypto P-256 key pair. */
  static async create(options: { compressed?: boolean } = {}): Promise<SoftwarePasskey> {
    const pair = await crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      true, // extractable so the raw public key can be exported
      ["sign", "verify"],
    );
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const publicKey = options.compressed ? p256.Point.fromBytes(raw).toBytes(true) : raw;
    return new SoftwarePasskey(pair.privateKey, publicKey);
  }

  /**
   * Signs `signedBytes` as a WebAuthn assertion and returns a `Passkey`
   * signature member body.
   */
  async assert(
    signedBytes: Uint8Array,
    options: AssertOptions = {},
  ): Promise<PasskeySignatureBody> {
    if (options.highS && options.lowS) throw new Error("highS and lowS are exclusive");
    const challenge = options.challenge ?? challengeText(signedBytes);
    const clientDataObject: Record<string, unknown> = {
      type: options.type ?? "webauthn.get",
      challenge,
      origin: options.origin ?? "http://localhost:8000",
    };
    if (!("crossOrigin" in options)) clientDataObject.crossOrigin = false;
    else if (options.crossOrigin !== undefined) clientDataObject.crossOrigin = options.crossOrigin;
    Object.assign(clientDataObject, options.extraClientData ?? {});
    const clientData = options.clientDataText
      ? options.clientDataText(challenge)
      : JSON.stringify(clientDataObject);

    const tail = options.authenticatorDataTail ?? new Uint8Array(0);
    const authenticatorData = new Uint8Array(37 + tail.length);
    authenticatorData.set(await sha256(encoder.encode(options.rpId ?? "localhost")), 0);
    authenticatorData[32] = options.flags ?? 0x05;
    new DataView(authenticatorData.buffer).setUint32(33, options.signCount ?? 0);
    authenticatorData.set(tail, 37);

    const clientDataHash = await sha256(encoder.encode(clientData));
    const message = new Uint8Array(authenticatorData.length + 32);
    message.set(authenticatorData, 0);
    message.set(clientDataHash, authenticatorData.length);
    const rs = new Uint8Array(
      await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.privateKey, message),
    );
    const s = bytesToBigInt(rs.subarray(32));
    // (r, n - s) verifies whenever (r, s) does: flip s to get the requested half.
    if ((options.highS && s <= HALF_N) || (options.lowS && s > HALF_N)) {
      rs.set(bigIntTo32Bytes(N - s), 32);
    }
    return {
      authenticator_data: base58.encode(authenticatorData),
      client_data: clientData,
      pub_key: base58.encode(this.publicKey),
      signature: base58.encode(encodeDerEcdsaSignature(rs)),
    };
  }
}
