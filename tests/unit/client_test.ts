/**
 * The client library (`client/mod.ts`) on its own: key files, the signed
 * bytes and signatures it makes checked by the server's own JCS writer,
 * challenge and verifier, the SEC1 point of a passkey's key, and its errors
 * for a service it cannot reach or that does not answer JSON. Its calls
 * against the whole service are `tests/app/client_calls_test.ts`.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  ed25519KeyFromSecret,
  fromKeyFile,
  generateEd25519Key,
  IntentsClient,
  p256PointFromSpki,
  passkeyChallenge,
  signedBytes,
  signVariantA,
  toKeyFile,
} from "../../client/mod.ts";
import { canonicalBytes } from "@intents/protocol/jcs";
import { challengeText as serverChallenge } from "@intents/protocol/signed";
import { verifyEd25519 } from "../../src/crypto/ed25519.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";

const SPKI_PREFIX = Uint8Array.from(
  "3059301306072a8648ce3d020106082a8648ce3d030107034200".match(/../g)!,
  (h) => parseInt(h, 16),
);

Deno.test("a key file round-trips and names matching keys", () => {
  const key = generateEd25519Key();
  const file = toKeyFile(key);
  assert.equal(file.kind, "Ed25519");
  const back = fromKeyFile(JSON.parse(JSON.stringify(file)));
  assert.deepEqual(back.secretKey, key.secretKey);
  assert.deepEqual(back.publicKey, key.publicKey);
  assert.deepEqual(ed25519KeyFromSecret(key.secretKey).publicKey, key.publicKey);
});

Deno.test("a key file whose public key belongs to another secret is refused", () => {
  const file = toKeyFile(generateEd25519Key());
  file.public_key = toKeyFile(generateEd25519Key()).public_key;
  assert.throws(() => fromKeyFile(file), TypeError);
  assert.throws(() => fromKeyFile({ ...toKeyFile(generateEd25519Key()), kind: "P256" }), TypeError);
  assert.throws(() => fromKeyFile({ secret_key: "0OIl" }), TypeError);
  assert.throws(() => fromKeyFile(null), TypeError);
  assert.throws(() => ed25519KeyFromSecret(new Uint8Array(31)), RangeError);
});

Deno.test("signed bytes are the server's JCS bytes", () => {
  const payload = { template_id: "t", id: "é", attrs: { fields: { b: 1e21, a: [1, "x"] } } };
  assert.deepEqual(signedBytes(payload), canonicalBytes(payload));
  assert.equal(
    new TextDecoder().decode(signedBytes(payload)),
    '{"attrs":{"fields":{"a":[1,"x"],"b":1e+21}},"id":"é","template_id":"t"}',
  );
});

Deno.test("a Variant A signature verifies with the server's strict verifier", async () => {
  const key = generateEd25519Key();
  const body = signVariantA({ id: "a", template_id: "t" }, key);
  const sig = body.signature as { Ed25519: { pub_key: string; signature: string } };
  const bytes = canonicalBytes(body.payload);
  assert.equal(
    await verifyEd25519(
      base58.decode(sig.Ed25519.pub_key),
      bytes,
      base58.decode(sig.Ed25519.signature),
    ),
    true,
  );
  const other = canonicalBytes({ ...body.payload, id: "b" });
  assert.equal(
    await verifyEd25519(
      base58.decode(sig.Ed25519.pub_key),
      other,
      base58.decode(sig.Ed25519.signature),
    ),
    false,
  );
});

Deno.test("the passkey challenge is the server's challenge for the same payload", async () => {
  const intent = { id: crypto.randomUUID(), policy_id: "p" };
  assert.equal(await passkeyChallenge(intent), await serverChallenge(canonicalBytes(intent)));
});

Deno.test("the SEC1 point is taken from a P-256 SubjectPublicKeyInfo", async () => {
  const passkey = await SoftwarePasskey.create();
  const spki = new Uint8Array(91);
  spki.set(SPKI_PREFIX, 0);
  spki.set(passkey.publicKey, 26);
  assert.deepEqual(p256PointFromSpki(spki), passkey.publicKey);
  const wrongCurve = spki.slice();
  wrongCurve[20] ^= 1;
  assert.throws(() => p256PointFromSpki(wrongCurve), TypeError);
  assert.throws(() => p256PointFromSpki(spki.subarray(0, 90)), TypeError);
});

Deno.test("an unreachable service is an IntentsError with code network", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const client = new IntentsClient({ url: `http://127.0.0.1:${port}` });
  await assert.rejects(client.health(), { name: "IntentsError", status: 0, code: "network" });
});

Deno.test("a non-JSON error answer keeps its status with code bad_response", async () => {
  const client = new IntentsClient({
    url: "http://proxy.test",
    fetch: () => Promise.resolve(new Response("<html>bad gateway</html>", { status: 502 })),
  });
  await assert.rejects(client.health(), { status: 502, code: "bad_response", message: "HTTP 502" });
});
