/**
 * Ed25519 verification cost per backend (node:crypto, Web Crypto, noble), with the per-key cache warm (one
 * signer) and cold (cycling through more signers than the cache holds, so every
 * call imports or decodes its key).
 */

import {
  type Ed25519Backend,
  isEd25519PointEncoding,
  verifyEd25519,
} from "../src/crypto/ed25519.ts";

const SIGNERS = 2048; // twice the key cache's 1024 entries: cyclic access always misses

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
const cold: Signed[] = [];
for (let i = 0; i < SIGNERS; i++) cold.push(await signFresh(message));

for (const backend of ["node", "webcrypto", "noble"] as Ed25519Backend[]) {
  Deno.bench(
    `verifyEd25519 ${backend}, warm key cache`,
    { group: backend, baseline: true },
    async () => {
      if (!(await verifyEd25519(warm.publicKey, warm.message, warm.signature, { backend }))) {
        throw new Error("valid signature rejected");
      }
    },
  );
  let next = 0;
  Deno.bench(`verifyEd25519 ${backend}, cold key cache`, { group: backend }, async () => {
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

Deno.bench("isEd25519PointEncoding", () => {
  if (!isEd25519PointEncoding(warm.publicKey)) throw new Error("valid key rejected");
});
