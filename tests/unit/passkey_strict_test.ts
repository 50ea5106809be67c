/**
 * The strict reading of passkey assertions (docs/interface.md §4): client data under
 * the strict JSON rules (no member twice, no `topOrigin`) and authenticator
 * data by its flags. Every assertion is signed over the bytes as they stand,
 * so only the rule under test is broken.
 */

import assert from "node:assert/strict";
import { type PasskeyAssertion, verifyPasskey } from "../../src/domain/passkey.ts";
import { type AssertOptions, SoftwarePasskey } from "../../testing/software_passkey.ts";
import { assertionBy, policy, signedBytes, strictPolicy } from "../support/passkey_assertions.ts";

const key = await SoftwarePasskey.create();

/** `{"credProtect": 2}` in CBOR, as authenticators emit it. */
const CRED_PROTECT = [0xa1, 0x6b, ...new TextEncoder().encode("credProtect"), 0x02];

/** `key` signs `signedBytes`; the body decoded to an assertion. */
function assertion(options: AssertOptions = {}) {
  return assertionBy(key, options);
}

async function assertRejected(input: PasskeyAssertion, reason: string): Promise<void> {
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: false, reason });
}

// ---------------------------------------------------------------- client data

/** Client data members in the order a browser writes them, each a raw `"name":value` text. */
function clientDataOf(...members: string[]): string {
  return `{${members.join(",")}}`;
}

const ORIGIN = '"origin":"http://localhost:8000"';
const GET = '"type":"webauthn.get"';
const SAME_ORIGIN = '"crossOrigin":false';

// Each text is signed as it stands, so only the repeated member is wrong; with
// JSON.parse the last of each pair would win and the assertion would verify.
const DUPLICATES: [string, (challenge: string) => string][] = [
  [
    "type webauthn.create, then webauthn.get",
    (c) => clientDataOf('"type":"webauthn.create"', `"challenge":"${c}"`, ORIGIN, SAME_ORIGIN, GET),
  ],
  [
    "crossOrigin true, then false",
    (c) => clientDataOf(GET, `"challenge":"${c}"`, ORIGIN, '"crossOrigin":true', SAME_ORIGIN),
  ],
  [
    "a foreign origin, then an accepted one",
    (c) => clientDataOf(GET, `"challenge":"${c}"`, '"origin":"https://evil.example"', ORIGIN),
  ],
  [
    "the challenge, escaped the second time",
    (c) => clientDataOf(GET, `"challenge":"${c}"`, ORIGIN, `"\\u0063hallenge":"${c}"`),
  ],
];

for (const [name, clientDataText] of DUPLICATES) {
  Deno.test(`rejects client data with a duplicate member: ${name}`, async () => {
    const input = await assertion({ clientDataText });
    // The premise: JSON.parse would read an acceptable object.
    const lenient = JSON.parse(input.clientData);
    assert.equal(lenient.type, "webauthn.get");
    assert.equal(lenient.origin, "http://localhost:8000");
    assert.notEqual(lenient.crossOrigin, true);
    const verdict = await verifyPasskey(input, signedBytes, policy);
    assert.equal(verdict.ok, false);
    assert.match(
      !verdict.ok ? verdict.reason : "",
      /^client data is not strict JSON: duplicate member name at byte \d+$/,
    );
  });
}

Deno.test("the duplicate check reads the signed text as it stands (control)", async () => {
  const input = await assertion({
    clientDataText: (c) => clientDataOf(GET, `"challenge":"${c}"`, ORIGIN, SAME_ORIGIN),
  });
  assert.deepEqual(await verifyPasskey(input, signedBytes, policy), { ok: true });
});

Deno.test("rejects client data with a topOrigin member", async () => {
  for (const topOrigin of ["http://localhost:8000", "https://top.example", null]) {
    await assertRejected(
      await assertion({ extraClientData: { topOrigin } }),
      "client data has a topOrigin member",
    );
  }
});

Deno.test("rejects client data with a lone surrogate escape or an inexact large integer", async () => {
  for (const extra of ['"note":"\\ud800"', '"n":9007199254740993']) {
    const input = await assertion({
      clientDataText: (c) => clientDataOf(GET, `"challenge":"${c}"`, ORIGIN, extra),
    });
    const verdict = await verifyPasskey(input, signedBytes, policy);
    assert.equal(verdict.ok, false);
    assert.match(!verdict.ok ? verdict.reason : "", /^client data is not strict JSON: /);
  }
});

// ---------------------------------------------------------------- authenticator data

Deno.test("accepts authenticator data with the extension data flag and one CBOR map", async () => {
  for (const tail of [[0xa0], CRED_PROTECT]) {
    const input = await assertion({
      flags: 0x85,
      authenticatorDataTail: Uint8Array.from(tail),
    });
    assert.equal(input.authenticatorData.length, 37 + tail.length);
    assert.deepEqual(await verifyPasskey(input, signedBytes, strictPolicy), { ok: true });
  }
});

// Each assertion below is signed over its authenticator data as it stands, so
// only the layout is wrong.

Deno.test("rejects bytes after 37 of authenticator data without the extension data flag", async () => {
  for (const tail of [[0x00], CRED_PROTECT, new Array(100).fill(0)]) {
    await assertRejected(
      await assertion({ authenticatorDataTail: Uint8Array.from(tail) }),
      "authenticator data is longer than 37 bytes without the extension data flag (0x80)",
    );
  }
});

Deno.test("rejects authenticator data with the attested credential data flag", async () => {
  const reason =
    "authenticator data has the attested credential data flag (0x40), which an assertion never has";
  await assertRejected(await assertion({ flags: 0x45 }), reason);
  await assertRejected(
    await assertion({ flags: 0x45, authenticatorDataTail: new Uint8Array(100) }),
    reason,
  );
});

Deno.test("rejects bytes after the extensions map", async () => {
  await assertRejected(
    await assertion({ flags: 0x85, authenticatorDataTail: Uint8Array.of(...CRED_PROTECT, 0) }),
    "authenticator data has bytes after the extensions map",
  );
});

Deno.test("rejects extensions that are not a CBOR map, or not well-formed", async () => {
  await assertRejected(
    await assertion({ flags: 0x85, authenticatorDataTail: Uint8Array.of(0x80) }),
    "authenticator data extensions are not a CBOR map",
  );
  await assertRejected(
    await assertion({ flags: 0x85, authenticatorDataTail: Uint8Array.of(0xa1, 0x61, 0x78) }),
    "authenticator data extensions are not well-formed CBOR",
  );
  await assertRejected(
    await assertion({ flags: 0x85 }),
    "authenticator data has the extension data flag (0x80) but no extensions",
  );
});
