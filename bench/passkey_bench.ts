import { base58 } from "@scure/base";
import { type PasskeyAssertion, type PasskeyPolicy, verifyPasskey } from "../src/domain/passkey.ts";
import { verifyP256 } from "../src/crypto/p256.ts";
import { SoftwarePasskey } from "../tests/support/authenticator.ts";

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

const message = new Uint8Array(69);
Deno.bench("verifyP256 alone (Web Crypto verify, warm key cache)", { group: "parts" }, async () => {
  await verifyP256(uncompressed.publicKey, message, uncompressed.signature);
});
