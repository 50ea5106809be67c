/**
 * What one client address sends in each kind of the abuse benchmark: every
 * request built in advance, with fresh keys (they cost an attacker nothing
 * and defeat the server's key cache), from the client library and the
 * software authenticator.
 * @module
 */

import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  multisigSignature,
  passkeySignature,
  type Signature,
  signedBytes,
  signVariantB,
  variantBBody,
} from "../../client/mod.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";

/** The kinds, in the order of the table, each with what its row says. */
export const KINDS = {
  "ordinary": "ordinary Variant B submissions (a fresh key each, all 201)",
  "multisig16": "Multisig of 16 fresh Ed25519 signers, all signatures valid, policy exists (201)",
  "multisig16-missing": "the same to a policy that does not exist (400)",
  "multisig16-first-bad": "the same with the first signature bad (400)",
  "multisig16-one-signature":
    "a Multisig naming 16 fresh keys, one valid signature, threshold 1 (201)",
  "passkey-long-data": "a passkey with ~4,000 characters of authenticator data (400)",
  "multisig16-passkeys": "a Multisig of 16 fresh passkeys, all valid (201)",
  "wrong-token": "GET /intents with a wrong bearer token (401, then 429)",
  "approvals-probe": "GET /intents/{id}/approvals of ids that do not exist (404, then 429)",
} as const;

/** One kind of the benchmark. */
export type Kind = keyof typeof KINDS;

/** One request, ready to send. */
export interface Prepared {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

const encoder = new TextEncoder();
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function post(body: unknown): Prepared {
  return {
    method: "POST",
    path: "/intents",
    headers: { "content-type": "application/json" },
    body: encoder.encode(JSON.stringify(body)),
  };
}

function newIntent(policyId: string, index: number): Intent {
  return {
    id: crypto.randomUUID(),
    policy_id: policyId,
    attrs: {
      fields: { amount: `${index % 100}.00`, currency: "EUR", reference: `abuse-${index}` },
    },
  };
}

/** A Multisig over `intent` by `n` fresh Ed25519 keys, `signing` of them signing. */
function ed25519Multisig(intent: Intent, n: number, signing: number, firstBad = false): Signature {
  const keys = Array.from({ length: n }, generateEd25519Key);
  const signatures = keys.slice(0, signing).map((key) => ed25519Signature(intent, key));
  if (firstBad) {
    const other = ed25519Signature({ ...intent, id: crypto.randomUUID() }, keys[0]);
    signatures[0] = { Ed25519: { ...signatures[0].Ed25519, signature: other.Ed25519.signature } };
  }
  return multisigSignature({
    signers: Object.fromEntries(keys.map((k) => [base58.encode(k.publicKey), 1])),
    threshold: Math.max(1, signing),
    signatures,
  });
}

async function passkeyOver(intent: Intent, origin: string) {
  const passkey = await SoftwarePasskey.create();
  const body = await passkey.assert(signedBytes(intent), { origin });
  return passkeySignature({
    authenticatorData: base58.decode(body.authenticator_data),
    clientDataJSON: encoder.encode(body.client_data),
    signature: base58.decode(body.signature),
    publicKey: base58.decode(body.pub_key),
  });
}

/** A base58 text of `length` characters (it decodes to about 0.73 bytes a character). */
function randomBase58(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  // Not "1" first: a leading "1" decodes to a zero byte, which would make it shorter.
  return Array.from(bytes, (b, i) => BASE58[i === 0 ? 1 + (b % 57) : b % 58]).join("");
}

/** What a kind needs from the server it is sent to. */
export interface KindContext {
  /** A policy that exists. */
  policyId: string;
  /** The passkey client data origin the server accepts. */
  origin: string;
}

/**
 * The `index`-th request of a kind.
 */
export async function prepare(kind: Kind, index: number, ctx: KindContext): Promise<Prepared> {
  const intent = newIntent(ctx.policyId, index);
  switch (kind) {
    case "ordinary":
      return post(signVariantB(intent, generateEd25519Key()));
    case "multisig16":
      return post(variantBBody(intent, ed25519Multisig(intent, 16, 16)));
    case "multisig16-missing": {
      const missing = { ...intent, policy_id: `missing-${crypto.randomUUID()}` };
      return post(variantBBody(missing, ed25519Multisig(missing, 16, 16)));
    }
    case "multisig16-first-bad":
      return post(variantBBody(intent, ed25519Multisig(intent, 16, 16, true)));
    case "multisig16-one-signature":
      return post(variantBBody(intent, ed25519Multisig(intent, 16, 1)));
    case "passkey-long-data": {
      const signature = await passkeyOver(intent, ctx.origin);
      signature.Passkey.authenticator_data = randomBase58(4000);
      return post(variantBBody(intent, signature));
    }
    case "multisig16-passkeys": {
      const entries = await Promise.all(
        Array.from({ length: 16 }, () => passkeyOver(intent, ctx.origin)),
      );
      return post(variantBBody(
        intent,
        multisigSignature({
          signers: Object.fromEntries(entries.map((e) => [e.Passkey.pub_key, 1])),
          threshold: 16,
          signatures: entries,
        }),
      ));
    }
    case "wrong-token":
      return {
        method: "GET",
        path: "/intents",
        headers: { authorization: `Bearer wrong-${crypto.randomUUID()}` },
      };
    case "approvals-probe":
      return { method: "GET", path: `/intents/order-${index}/approvals`, headers: {} };
  }
}
