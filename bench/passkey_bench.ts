import { base58 } from "@scure/base";
import { type PasskeyAssertion, type PasskeyPolicy, verifyPasskey } from "../src/domain/passkey.ts";
import { type P256Backend, P256PublicKey, verifyP256 } from "../src/crypto/p256.ts";
import { sha256 } from "@noble/hashes/sha2.js";
import { SoftwarePasskey } from "../testing/software_passkey.ts";

const policy: PasskeyPolicy = {
  rpIds: ["localhost"],
  origins: ["http://localhost:8000"],
  requireUserVerification: false,
};
const signedBytes = new TextEncoder().encode(
  '{"attrs":{"fields":{"amount":"12.50"}},"id":"intent-1","template_id":"tpl"}',
);

async function assertionFor(key: SoftwarePasskey): Promise<PasskeyAssertion> {
  const body = await key.assert(signedBytes);
  return {
    authenticatorData: base58.decode(body.authenticator_data),
    clientData: body.client_data,
    publicKey: base58.decode(body.pub_key),
    signature: base58.decode(body.signature),
  };
}

const uncompressed = await assertionFor(await SoftwarePasskey.create());
const compressed = await assertionFor(await SoftwarePasskey.create({ compressed: true }));
// Warm the key cache and the rpId hash cache; a failed warm-up would make the figures meaningless.
for (const assertion of [uncompressed, compressed]) {
  const verdict = await verifyPasskey(assertion, signedBytes, policy);
  if (!verdict.ok) throw new Error(`bench assertion does not verify: ${verdict.reason}`);
}

Deno.bench(
  "verifyPasskey, uncompressed key, warm key cache",
  { group: "passkey", baseline: true },
  async () => {
    await verifyPasskey(uncompressed, signedBytes, policy);
  },
);

Deno.bench("verifyPasskey, compressed key, warm key cache", { group: "passkey" }, async () => {
  await verifyPasskey(compressed, signedBytes, policy);
});

Deno.bench(
  "verifyPasskey, compressed key, cold key cache (fresh key each time)",
  { group: "cold" },
  async (b) => {
    const key = await SoftwarePasskey.create({ compressed: true });
    const assertion = await assertionFor(key);
    b.start();
    await verifyPasskey(assertion, signedBytes, policy);
    b.end();
  },
);

// verifyP256 alone, per backend: the message is what the passkey verifier builds
// (authenticator data ‖ SHA-256(client data)), the key decoded once and kept (as
// the service's key cache keeps it) or decoded from its bytes on every call.
const p256Message = Uint8Array.of(
  ...uncompressed.authenticatorData,
  ...sha256(new TextEncoder().encode(uncompressed.clientData)),
);
const keptKey = new P256PublicKey(uncompressed.publicKey as Uint8Array);
for (const backend of ["webcrypto", "noble"] as P256Backend[]) {
  if (!(await verifyP256(keptKey, p256Message, uncompressed.signature, { backend }))) {
    throw new Error(`bench signature does not verify on ${backend}`);
  }
  Deno.bench(
    `verifyP256 ${backend}, key kept`,
    { group: `p256 ${backend}`, baseline: true },
    async () => {
      await verifyP256(keptKey, p256Message, uncompressed.signature, { backend });
    },
  );
  Deno.bench(
    `verifyP256 ${backend}, key decoded each call`,
    { group: `p256 ${backend}` },
    async () => {
      await verifyP256(uncompressed.publicKey, p256Message, uncompressed.signature, { backend });
    },
  );
}
