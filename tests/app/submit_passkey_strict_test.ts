/**
 * Passkey assertions read strictly, end to end (docs/interface.md §4): client data is
 * read under the strict JSON rules (a duplicate member anywhere is refused,
 * so is `topOrigin`), and authenticator data by its flags (37 bytes; never
 * AT; with ED one CBOR map that ends the data). Every refused assertion here
 * is properly signed by the software authenticator over the bytes sent, so
 * only the rule under test is broken.
 */

import assert from "node:assert/strict";
import {
  ed25519Signature,
  generateEd25519Key,
  type Intent,
  multisigSignature,
  type PasskeySignature,
  type Payload,
  type Signature,
  variantABody,
  variantBBody,
} from "../../client/mod.ts";
import type { AssertOptions } from "../../testing/software_passkey.ts";
import {
  expectCreated,
  expectError,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
  SoftwarePasskey,
} from "../support/fixtures.ts";
import { type Harness, PASSKEY_ORIGIN } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";

const ORIGIN = `"origin":"${PASSKEY_ORIGIN}"`;
const GET = '"type":"webauthn.get"';
const SAME_ORIGIN = '"crossOrigin":false';

/** Client data text from raw `"name":value` members, in the order given. */
function clientData(...members: string[]): string {
  return `{${members.join(",")}}`;
}

/**
 * Client data texts with one member given twice, the last value the
 * acceptable one: `JSON.parse` (last one wins) would let each through.
 */
const DUPLICATES: [string, (challenge: string) => string][] = [
  [
    '"type":"webauthn.create" then "type":"webauthn.get"',
    (c) => clientData('"type":"webauthn.create"', `"challenge":"${c}"`, ORIGIN, SAME_ORIGIN, GET),
  ],
  [
    '"crossOrigin":true then "crossOrigin":false',
    (c) => clientData(GET, `"challenge":"${c}"`, ORIGIN, '"crossOrigin":true', SAME_ORIGIN),
  ],
  [
    "a foreign origin then an allowed one",
    (c) =>
      clientData(
        GET,
        `"challenge":"${c}"`,
        '"origin":"https://attacker.example"',
        ORIGIN,
        SAME_ORIGIN,
      ),
  ],
];

/** `{"credProtect": 2}` in CBOR. */
const CRED_PROTECT = [0xa1, 0x6b, ...new TextEncoder().encode("credProtect"), 0x02];

/** Submits Variant A signed by `passkey` with `options`; returns the answer and what was sent. */
async function submitA(
  h: Harness,
  templateId: string,
  passkey: SoftwarePasskey,
  options: AssertOptions = {},
): Promise<{ response: Response; payload: Payload; signature: PasskeySignature }> {
  const payload = newPayload(templateId);
  const signature = await passkeySig(passkey, payload, options);
  return { response: await h.submit(variantABody(payload, signature)), payload, signature };
}

/** Expects 400 `invalid_signature` whose message names the passkey's path and `reason`. */
async function expectRefused(
  response: Response,
  reason: string,
  path = "signature.Passkey",
): Promise<string> {
  return await expectError(response, 400, "invalid_signature", {
    mentions: [path, reason],
    notEcho: ["attacker.example", "webauthn.create"],
  });
}

Deno.test("passkey assertions read strictly", async (t) => {
  await withApp({}, async (h) => {
    const templateId = await h.newTemplate();
    const policyId = await h.newPolicy();
    const passkey = await SoftwarePasskey.create();

    await t.step("accepts a normal assertion (201)", async () => {
      const { response, signature } = await submitA(h, templateId, passkey);
      const record = await expectCreated(response);
      assert.deepEqual(record.authorship, {
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts the same members written by hand, each once (control)", async () => {
      const { response } = await submitA(h, templateId, passkey, {
        clientDataText: (c) => clientData(GET, `"challenge":"${c}"`, ORIGIN, SAME_ORIGIN),
      });
      await expectCreated(response);
    });

    for (const [name, clientDataText] of DUPLICATES) {
      await t.step(`refuses client data with ${name}`, async () => {
        const { response, payload } = await submitA(h, templateId, passkey, { clientDataText });
        await expectRefused(response, "duplicate member name");
        // Nothing was stored: the id is still free for a proper assertion.
        const signature = await passkeySig(passkey, payload);
        await expectCreated(await h.submit(variantABody(payload, signature)));
      });
    }

    await t.step("refuses a duplicate member in Variant B and inside a multisig", async () => {
      const [, clientDataText] = DUPLICATES[0];
      const intent: Intent = newIntent(policyId);
      const signature = await passkeySig(passkey, intent, { clientDataText });
      await expectRefused(
        await h.submit(variantBBody(intent, signature)),
        "duplicate member name",
        "authorship.Signed.Passkey",
      );

      const key = generateEd25519Key();
      const payload = newPayload(templateId);
      const entry = await passkeySig(passkey, payload, { clientDataText });
      const multisig: Signature = multisigSignature({
        signers: { [keyText(key)]: 1, [entry.Passkey.pub_key]: 1 },
        threshold: 2,
        signatures: [ed25519Signature(payload, key), entry],
      });
      await expectRefused(
        await h.submit(variantABody(payload, multisig)),
        "duplicate member name",
        "signature.Multisig.signatures[1].Passkey",
      );
    });

    await t.step("refuses client data with a topOrigin member", async () => {
      for (const topOrigin of [PASSKEY_ORIGIN, "https://top.example"]) {
        const { response } = await submitA(h, templateId, passkey, {
          extraClientData: { topOrigin },
        });
        await expectRefused(response, "topOrigin");
      }
    });

    // ---- authenticator data by its flags ----

    await t.step("refuses bytes after 37 without the extension data flag", async () => {
      for (const tail of [[0x00], new Array(100).fill(0x42)]) {
        const { response } = await submitA(h, templateId, passkey, {
          authenticatorDataTail: Uint8Array.from(tail),
        });
        await expectRefused(response, "longer than 37 bytes");
      }
    });

    await t.step("refuses the attested credential data flag", async () => {
      const { response } = await submitA(h, templateId, passkey, { flags: 0x45 });
      await expectRefused(response, "attested credential data");
    });

    await t.step("accepts the extension data flag with one CBOR map (201)", async () => {
      for (const tail of [[0xa0], CRED_PROTECT]) {
        const { response } = await submitA(h, templateId, passkey, {
          flags: 0x85,
          authenticatorDataTail: Uint8Array.from(tail),
        });
        await expectCreated(response);
      }
    });

    await t.step("refuses bytes after the extensions map", async () => {
      const { response } = await submitA(h, templateId, passkey, {
        flags: 0x85,
        authenticatorDataTail: Uint8Array.of(...CRED_PROTECT, 0x00),
      });
      await expectRefused(response, "bytes after the extensions map");
    });

    await t.step("refuses extensions that are not a map, or not well-formed", async () => {
      const cases: [number[], string][] = [
        [[0x80], "not a CBOR map"],
        [[0x02], "not a CBOR map"],
        [[0xa1, 0x61, 0x78], "not well-formed CBOR"],
        [[], "no extensions"],
      ];
      for (const [tail, reason] of cases) {
        const { response } = await submitA(h, templateId, passkey, {
          flags: 0x85,
          authenticatorDataTail: Uint8Array.from(tail),
        });
        await expectRefused(response, reason);
      }
    });
  });
});
