import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import { p256 } from "@noble/curves/nist.js";
import { encodeDerEcdsaSignature, parseDerEcdsaSignature } from "../../src/crypto/der.ts";
import { challengeText } from "@intents/protocol/signed";
import {
  type PasskeyAssertion,
  type PasskeyPolicy,
  verifyPasskey,
} from "../../src/domain/passkey.ts";
import { type AssertOptions, SoftwarePasskey } from "../../testing/software_passkey.ts";
import { assertionBy, policy, signedBytes, strictPolicy } from "../support/passkey_assertions.ts";

const N = p256.Point.CURVE().n;

const uncompressedKey = await SoftwarePasskey.create();
const compressedKey = await SoftwarePasskey.create({ compressed: true });

/** Signs `signedBytes` with the software authenticator and decodes the body to an assertion. */
function assertion(options: AssertOptions = {}, key: SoftwarePasskey = uncompressedKey) {
  return assertionBy(key, options);
}

async function assertRejected(
  input: PasskeyAssertion,
  reason: string,
  usedPolicy: PasskeyPolicy = policy,
  bytes: Uint8Array = signedBytes,
): Promise<void> {
  assert.deepEqual(await verifyPasskey(input, bytes, usedPolicy), { ok: false, reason });
}

function sIsHigh(der: Uint8Array): boolean {
  const s = parseDerEcdsaSignature(der).subarray(32);
  return BigInt("0x" + Array.from(s, (b) => b.toString(16).padStart(2, "0")).join("")) > N / 2n;
}

// ---------------------------------------------------------------- accepted

Deno.test("challengeText is base64url without padding of SHA-256 of the signed bytes", async () => {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", signedBytes));
  const challenge = challengeText(signedBytes);
  assert.equal(challenge, base64urlnopad.encode(digest));
  assert.equal(challenge.length, 43);
  assert.match(challenge, /^[A-Za-z0-9_-]+$/);
});

Deno.test("accepts a valid assertion with an uncompressed key", async () => {
  const input = await assertion();
  assert.equal(input.publicKey.length, 65);
  assert.deepEqual(await verifyPasskey(input, signedBytes, strictPolicy), { ok: true });
});

Deno.test("accepts a valid assertion with a compressed key", async () => {
  const input = await assertion({}, compressedKey);
  assert.equal(input.publicKey.length, 33);
  assert.deepEqual(await verifyPasskey(input, signedBytes, strictPolicy), { ok: true });
});

Deno.test("accepts an assertion without user verification when it is not required", async () => {
  const input = await assertion({ flags: 0x01 });
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts an assertion with user verification when it is not required", async () => {
  const input = await assertion({ flags: 0x05 });
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts client data with extra members a browser appends", async () => {
  const input = await assertion({
    extraClientData: {
      other_keys_can_be_added_here:
        "do not compare clientDataJSON against a template. See https://goo.gl/yabPex",
    },
  });
  assert.match(input.clientData, /other_keys_can_be_added_here/);
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts client data without a crossOrigin member", async () => {
  const input = await assertion({ crossOrigin: undefined });
  assert.doesNotMatch(input.clientData, /crossOrigin/);
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts a high-S signature", async () => {
  const input = await assertion({ highS: true });
  assert.equal(sIsHigh(input.signature), true);
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts a low-S signature", async () => {
  const input = await assertion({ lowS: true }, compressedKey);
  assert.equal(sIsHigh(input.signature), false);
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("accepts any of several relying parties and origins", async () => {
  const wide: PasskeyPolicy = {
    rpIds: ["example.com", "localhost"],
    origins: ["https://example.com", "http://localhost:8000"],
    requireUserVerification: true,
  };
  const input = await assertion({ rpId: "example.com", origin: "https://example.com" });
  assert.deepEqual(await verifyPasskey(input, signedBytes, wide), { ok: true });
  assert.deepEqual(await verifyPasskey(await assertion(), signedBytes, wide), { ok: true });
});

// ---------------------------------------------------------------- client data

Deno.test("rejects client data of another type", async () => {
  await assertRejected(
    await assertion({ type: "webauthn.create" }),
    "client data type is not webauthn.get",
  );
});

Deno.test("rejects client data with another challenge", async () => {
  const other = challengeText(new TextEncoder().encode("something else"));
  await assertRejected(
    await assertion({ challenge: other }),
    "client data challenge does not match the signed bytes",
  );
});

Deno.test("rejects an assertion over other signed bytes", async () => {
  await assertRejected(
    await assertion(),
    "client data challenge does not match the signed bytes",
    policy,
    new TextEncoder().encode('{"id":"intent-2","template_id":"t"}'),
  );
});

Deno.test("rejects client data with a padded challenge", async () => {
  const padded = challengeText(signedBytes) + "=";
  await assertRejected(
    await assertion({ challenge: padded }),
    "client data challenge does not match the signed bytes",
  );
});

Deno.test("rejects client data from another origin", async () => {
  await assertRejected(
    await assertion({ origin: "https://evil.example" }),
    "client data origin is not accepted",
  );
});

Deno.test("rejects client data from an origin differing only by a trailing slash", async () => {
  await assertRejected(
    await assertion({ origin: "http://localhost:8000/" }),
    "client data origin is not accepted",
  );
});

Deno.test("rejects client data with crossOrigin true", async () => {
  await assertRejected(await assertion({ crossOrigin: true }), "client data crossOrigin is true");
});

for (const value of ["false", 0, null, {}]) {
  Deno.test(`rejects client data with a non-boolean crossOrigin (${JSON.stringify(value)})`, async () => {
    await assertRejected(
      await assertion({ crossOrigin: value }),
      "client data crossOrigin is not a boolean",
    );
  });
}

Deno.test("rejects client data that is not JSON", async () => {
  const input = await assertion();
  await assertRejected(
    { ...input, clientData: input.clientData.slice(0, -1) },
    `client data is not strict JSON: unexpected end of input at byte ${
      input.clientData.length - 1
    }`,
  );
});

for (const clientData of ["[]", "null", '"webauthn.get"', "42"]) {
  Deno.test(`rejects client data that is not a JSON object (${clientData})`, async () => {
    await assertRejected(
      { ...(await assertion()), clientData },
      "client data is not a JSON object",
    );
  });
}

Deno.test("rejects a tampered client data byte", async () => {
  const input = await assertion({ extraClientData: { note: "abc" } });
  const clientData = input.clientData.replace('"abc"', '"abd"');
  assert.notEqual(clientData, input.clientData);
  await assertRejected({ ...input, clientData }, "signature does not verify");
});

Deno.test("rejects client data re-serialised with white space", async () => {
  const input = await assertion();
  const clientData = JSON.stringify(JSON.parse(input.clientData), null, 1);
  await assertRejected({ ...input, clientData }, "signature does not verify");
});

// ---------------------------------------------------------------- authenticator data

Deno.test("rejects authenticator data shorter than 37 bytes", async () => {
  const input = await assertion();
  await assertRejected(
    { ...input, authenticatorData: input.authenticatorData.subarray(0, 36) },
    "authenticator data is shorter than 37 bytes",
  );
  await assertRejected(
    { ...input, authenticatorData: new Uint8Array(0) },
    "authenticator data is shorter than 37 bytes",
  );
});

Deno.test("rejects authenticator data for another relying party", async () => {
  await assertRejected(
    await assertion({ rpId: "example.com" }),
    "authenticator data rpIdHash matches no accepted relying party",
  );
});

Deno.test("rejects an assertion when the policy accepts no relying party", async () => {
  await assertRejected(
    await assertion(),
    "authenticator data rpIdHash matches no accepted relying party",
    { ...policy, rpIds: [] },
  );
});

Deno.test("rejects authenticator data without the user-present flag", async () => {
  await assertRejected(await assertion({ flags: 0x04 }), "user presence flag is not set");
  await assertRejected(await assertion({ flags: 0x00 }), "user presence flag is not set");
});

Deno.test("rejects authenticator data without the user-verified flag when it is required", async () => {
  await assertRejected(
    await assertion({ flags: 0x01 }),
    "user verification flag is not set",
    strictPolicy,
  );
});

Deno.test("rejects tampered authenticator data", async () => {
  const input = await assertion({ signCount: 7 });
  const authenticatorData = input.authenticatorData.slice();
  authenticatorData[36] ^= 1; // the sign counter: every check but the signature still passes
  await assertRejected({ ...input, authenticatorData }, "signature does not verify");
});

Deno.test("rejects authenticator data with a flag added after signing", async () => {
  const input = await assertion({ flags: 0x01 });
  const authenticatorData = input.authenticatorData.slice();
  authenticatorData[32] |= 0x04;
  await assertRejected({ ...input, authenticatorData }, "signature does not verify", strictPolicy);
});

// ---------------------------------------------------------------- key and signature

Deno.test("rejects a signature by another key", async () => {
  const input = await assertion();
  await assertRejected(
    { ...input, publicKey: compressedKey.publicKey },
    "signature does not verify",
  );
});

Deno.test("rejects a public key that is not a point on the curve", async () => {
  const input = await assertion();
  const publicKey = input.publicKey.slice();
  publicKey[64] ^= 1;
  await assertRejected({ ...input, publicKey }, "public key is not a valid P-256 point");
  await assertRejected(
    { ...input, publicKey: publicKey.subarray(0, 40) },
    "public key is not a valid P-256 point",
  );
});

Deno.test("rejects a signature that is not strict DER", async () => {
  const input = await assertion();
  const der = input.signature;
  const cases = [
    Uint8Array.of(...der, 0), // trailing byte
    Uint8Array.of(0x30, 0x81, ...der.subarray(1)), // long-form length
    der.subarray(0, der.length - 1), // truncated
    new Uint8Array(0),
    parseDerEcdsaSignature(der), // raw r || s instead of DER
  ];
  for (const signature of cases) {
    await assertRejected({ ...input, signature }, "signature is not strict DER");
  }
});

Deno.test("rejects a signature with s equal to the curve order", async () => {
  const input = await assertion();
  const rs = parseDerEcdsaSignature(input.signature);
  const n = N.toString(16).match(/../g)!.map((h) => parseInt(h, 16));
  const bad = Uint8Array.of(...rs.subarray(0, 32), ...n);
  await assertRejected(
    { ...input, signature: encodeDerEcdsaSignature(bad) },
    "signature r or s is out of range",
  );
});

// ---------------------------------------------------------------- hostile shapes

Deno.test("never throws for inputs of the wrong types", async () => {
  const input = await assertion();
  const hostile: unknown[] = [
    null,
    undefined,
    {},
    { ...input, authenticatorData: "bytes" },
    { ...input, clientData: 42 },
    { ...input, publicKey: null },
    { ...input, signature: [1, 2, 3] },
  ];
  for (const value of hostile) {
    const verdict = await verifyPasskey(value as PasskeyAssertion, signedBytes, policy);
    assert.equal(verdict.ok, false);
  }
  const verdict = await verifyPasskey(input, "text" as unknown as Uint8Array, policy);
  assert.equal(verdict.ok, false);
});

Deno.test("failure reasons never echo the client data", async () => {
  const marker = "MARKER-<script>";
  const input = await assertion({ origin: marker, extraClientData: { x: marker } });
  const verdict = await verifyPasskey(input, signedBytes, policy);
  assert.equal(verdict.ok, false);
  assert.ok(!verdict.ok && !verdict.reason.includes("MARKER"));
});
