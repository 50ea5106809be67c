/**
 * Signed submission bodies for the load tools, built with the client library:
 * Ed25519 on Web Crypto (fast enough for 100,000 bodies), passkeys from the
 * software authenticator, Multisig of three; and the template or policy they
 * reference.
 * @module
 */

import { base58 } from "@scure/base";
import {
  type Ed25519Signature,
  type Intent,
  IntentsClient,
  multisigSignature,
  newIntentId,
  passkeySignature,
  type Payload,
  type Signature,
  signedBytes,
} from "../../client/mod.ts";
import type { LoadRule } from "./rules.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";

/** What {@link bodyBuilder} builds: the variant, the signature kind, the passkey origin. */
export interface BodySpec {
  variant: "A" | "B";
  kind: "ed25519" | "passkey" | "multisig";
  origin: string;
  /** The Ed25519 signer (`ed25519` kind); a new one when absent. */
  signer?: WebCryptoSigner;
  /** Variant B ids: random UUIDv4s (the default) or UUIDv7s, which grow with time. */
  ids?: "v4" | "v7";
}

/** One signed request body and the intent id it carries (as the server stores it). */
export interface Built {
  id: string;
  body: Uint8Array;
}

/** Ed25519 signer on Web Crypto: the native signer builds 100,000 bodies in seconds. */
export interface WebCryptoSigner {
  /** The public key, base58. */
  publicKey: string;
  sign(bytes: Uint8Array): Promise<Ed25519Signature>;
}

/** A new Ed25519 signer on Web Crypto. */
export async function webCryptoSigner(): Promise<WebCryptoSigner> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = base58.encode(
    new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)),
  );
  return {
    publicKey,
    async sign(bytes) {
      const signature = new Uint8Array(
        await crypto.subtle.sign("Ed25519", pair.privateKey, bytes as Uint8Array<ArrayBuffer>),
      );
      return { Ed25519: { pub_key: publicKey, signature: base58.encode(signature) } };
    },
  };
}

/**
 * Posts a fresh template (Variant A) or policy (Variant B) and returns its id;
 * with `authorization`, a governed one (sent as JSON), with rules when it has them.
 */
export async function addReference(
  url: string,
  token: string,
  variant: "A" | "B",
  authorization?: { signers: Record<string, number>; threshold: number; rules?: LoadRule[] },
): Promise<string> {
  const admin = new IntentsClient({ url, token });
  const document = JSON.stringify({ load: true, nonce: crypto.randomUUID(), authorization });
  return variant === "A"
    ? (await admin.addTemplate(document)).id
    : (await admin.addPolicy(document)).id;
}

/**
 * Builds signed bodies of the chosen variant and kind, each with its intent
 * id; the signed bytes come from the client library.
 */
export async function bodyBuilder(
  spec: BodySpec,
  refId: string,
): Promise<(index: number) => Promise<Built>> {
  const encoder = new TextEncoder();
  const single = spec.signer ?? await webCryptoSigner();
  const trio = [single, await webCryptoSigner(), await webCryptoSigner()];
  const passkey = spec.kind === "passkey" ? await SoftwarePasskey.create() : undefined;
  const run = crypto.randomUUID().slice(0, 8);

  async function sign(value: Payload | Intent): Promise<Signature> {
    const bytes = signedBytes(value);
    if (spec.kind === "ed25519") return await single.sign(bytes);
    if (spec.kind === "multisig") {
      return multisigSignature({
        signers: Object.fromEntries(trio.map((s) => [s.publicKey, 1])),
        threshold: 3,
        signatures: await Promise.all(trio.map((s) => s.sign(bytes))),
      });
    }
    const body = await passkey!.assert(bytes, { origin: spec.origin });
    return passkeySignature({
      authenticatorData: base58.decode(body.authenticator_data),
      clientDataJSON: encoder.encode(body.client_data),
      signature: base58.decode(body.signature),
      publicKey: base58.decode(body.pub_key),
    });
  }

  return async (index) => {
    // A typical intent: a few business fields.
    const attrs = {
      fields: { amount: `${(index % 10_000) / 100}`, currency: "EUR", reference: `load-${index}` },
    };
    if (spec.variant === "A") {
      const payload: Payload = { id: `load-${run}-${index}`, template_id: refId, attrs };
      const body = JSON.stringify({ payload, signature: await sign(payload) });
      return { id: payload.id, body: encoder.encode(body) };
    }
    // Both are lower case, as the server stores UUID ids.
    const id = spec.ids === "v7" ? newIntentId() : crypto.randomUUID();
    const intent: Intent = { id, policy_id: refId, attrs };
    const body = JSON.stringify({ authorship: { Signed: await sign(intent) }, intent });
    return { id: intent.id, body: encoder.encode(body) };
  };
}

/** Builds bodies 0..total-1; returns them, their ids, and the seconds it took. */
export async function buildBodies(
  build: (index: number) => Promise<Built>,
  total: number,
): Promise<{ ids: string[]; bodies: Uint8Array[]; seconds: number }> {
  const started = performance.now();
  const ids: string[] = new Array(total);
  const bodies: Uint8Array[] = new Array(total);
  // Signing is asynchronous on Web Crypto: build in slices to keep memory and latency flat.
  for (let i = 0; i < total; i += 256) {
    const slice = await Promise.all(
      Array.from({ length: Math.min(256, total - i) }, (_, k) => build(i + k)),
    );
    for (let k = 0; k < slice.length; k++) {
      ids[i + k] = slice[k].id;
      bodies[i + k] = slice[k].body;
    }
  }
  return { ids, bodies, seconds: (performance.now() - started) / 1000 };
}
