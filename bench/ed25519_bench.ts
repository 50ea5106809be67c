/**
 * Ed25519 verification cost per backend (node:crypto, Web Crypto, noble), with
 * the key decoded once and kept (warm: as the service's key cache keeps a
 * signer's key) and with a new key object every call (cold: decoding, point
 * checks and import each time).
 */

import { type Ed25519Backend, Ed25519PublicKey, verifyEd25519 } from "../src/crypto/ed25519.ts";

const SIGNERS = 256;

interface Signed {
  publicKey: Uint8Array<ArrayBuffer>;
  message: Uint8Array<ArrayBuffer>;
  signature: Uint8Array<ArrayBuffer>;
}

async function signFresh(message: Uint8Array<ArrayBuffer>): Promise<Signed & { key: CryptoKey }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", pair.privateKey, message));
  return { publicKey, message, signature, key: pair.publicKey };
}

const message = new TextEncoder().encode(
  JSON.stringify({ id: "7c0e2f5e-1f1a-4d7e-9a43-3c2b1d0e9f88", template_id: "transfer" }),
);
const warm = await signFresh(message);
const warmKey = new Ed25519PublicKey(warm.publicKey);
const cold: Signed[] = [];
for (let i = 0; i < SIGNERS; i++) cold.push(await signFresh(message));

for (const backend of ["node", "webcrypto", "noble"] as Ed25519Backend[]) {
  Deno.bench(
    `verifyEd25519 ${backend}, key kept`,
    { group: backend, baseline: true },
    async () => {
      if (!(await verifyEd25519(warmKey, warm.message, warm.signature, { backend }))) {
        throw new Error("valid signature rejected");
      }
    },
  );
  let next = 0;
  Deno.bench(`verifyEd25519 ${backend}, key decoded each call`, { group: backend }, async () => {
    const s = cold[next++ % SIGNERS];
    if (!(await verifyEd25519(s.publicKey, s.message, s.signature, { backend }))) {
      throw new Error("valid signature rejected");
    }
  });
}

Deno.bench("crypto.subtle.verify alone (key imported once, no strict checks)", async () => {
  if (!(await crypto.subtle.verify("Ed25519", warm.key, warm.signature, warm.message))) {
    throw new Error("valid signature rejected");
  }
});

Deno.bench("new Ed25519PublicKey (decoding and point checks)", () => {
  if (!new Ed25519PublicKey(warm.publicKey).isPoint) throw new Error("valid key rejected");
});
