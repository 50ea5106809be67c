/**
 * Governed documents (docs/interface.md §10) against the real server: a template or
 * policy sent as `application/json` must be strict JSON, and its
 * `authorization` member a valid quorum, else 400 `invalid_json` or
 * `invalid_authorization` naming the path, and nothing is stored; a valid one
 * is stored like any document (201, then 200 for the same bytes); documents of
 * other content types, or JSON without `authorization`, govern nothing.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { generateEd25519Key, signVariantA, signVariantB } from "../../client/mod.ts";
import {
  contentAddress,
  expectError,
  keyText,
  newIntent,
  newPayload,
} from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import {
  compressed,
  invalidCompressedP256,
  invalidEd25519Point,
  torsionTwin,
  uncompressedOffCurve,
} from "../support/keys.ts";
import { type DocKind, passkeySigner, postDocument } from "../support/governed.ts";
import type { Json } from "../support/record.ts";

const kinds: DocKind[] = ["template", "policy"];

/** A document text with `authorization` as given (a nonce keeps each document new). */
function docText(authorization: unknown): string {
  return JSON.stringify({ rules: crypto.randomUUID(), authorization });
}

/** Asserts a 400 with `code` naming `path`, and that the document was not stored. */
async function refused(h: Harness, kind: DocKind, text: string, code: string, path: string) {
  await expectError(await postDocument(h, kind, text), 400, code, { mentions: path });
  const id = await contentAddress(text);
  const got = await h.fetch(`/${kind === "template" ? "templates" : "policies"}/${id}`);
  await expectError(got, 404, "not_found");
}

Deno.test("POST /templates and /policies: governed documents", async (t) => {
  await withApp({}, async (h) => {
    const a = generateEd25519Key();
    const b = generateEd25519Key();
    const pk = await passkeySigner();
    const ka = keyText(a);
    const kb = keyText(b);
    const valid = (extra: Json = {}) => ({ signers: { [ka]: 1, [kb]: 1 }, threshold: 2, ...extra });

    await t.step("a document sent as JSON must be strict JSON: 400 invalid_json", async () => {
      for (const kind of kinds) {
        const nonce = crypto.randomUUID();
        const texts = [
          `{"rules":"${nonce}","rules":"twice"}`,
          `{"rules":"${nonce}","authorization":{"signers":{"${ka}":1,"${ka}":1},"threshold":1}}`,
          `{"rules":"${nonce}","authorization":{"threshold":1,"threshold":1,"signers":{"${ka}":1}}}`,
          `{"n":"${nonce}","authorization":1,"authorization":2}`,
          `{"rules":"${nonce}","amount":9007199254740993}`,
          `{"rules":"${nonce}"`,
        ];
        for (const text of texts) {
          await expectError(await postDocument(h, kind, text), 400, "invalid_json");
          await expectError(
            await postDocument(h, kind, text, "application/json; charset=utf-8"),
            400,
            "invalid_json",
          );
        }
      }
    });

    await t.step("authorization that is not an object names the member", async () => {
      for (const kind of kinds) {
        for (const value of [null, [], "x", 1, true, [valid()]]) {
          await refused(h, kind, docText(value), "invalid_authorization", "authorization");
        }
      }
    });

    await t.step("signers: none, 17, not an object, or missing", async () => {
      const seventeen = Object.fromEntries(
        Array.from({ length: 17 }, () => [keyText(generateEd25519Key()), 1]),
      );
      const cases: unknown[] = [
        { signers: {}, threshold: 1 },
        { signers: seventeen, threshold: 1 },
        { signers: [ka], threshold: 1 },
        { signers: null, threshold: 1 },
        { threshold: 1 },
      ];
      for (const kind of kinds) {
        for (const value of cases) {
          await refused(h, kind, docText(value), "invalid_authorization", "authorization.signers");
        }
      }
    });

    await t.step("a signer key that is bad base58, the wrong length or not a point", async () => {
      const keys = [
        "0OIl" + ka.slice(4), // outside the Bitcoin alphabet
        base58.encode(new Uint8Array(31).fill(7)),
        base58.encode(new Uint8Array(34).fill(7)),
        base58.encode(invalidEd25519Point()),
        base58.encode(invalidCompressedP256()),
        base58.encode(uncompressedOffCurve()),
        "",
      ];
      for (const kind of kinds) {
        for (const key of keys) {
          const text = docText({ signers: { [ka]: 1, [key]: 1 }, threshold: 1 });
          await refused(h, kind, text, "invalid_authorization", "authorization.signers");
        }
      }
    });

    await t.step("an Ed25519 key outside the prime-order subgroup (A + T)", async () => {
      // The holder of a's secret signs under A + T too: it would count as two signers.
      const twin = base58.encode(torsionTwin(a.secretKey).publicKey);
      for (const kind of kinds) {
        for (const signers of [{ [ka]: 1, [twin]: 1 }, { [twin]: 1 }]) {
          const text = docText({ signers, threshold: 1 });
          const message = await expectError(
            await postDocument(h, kind, text),
            400,
            "invalid_authorization",
            { mentions: "authorization.signers" },
          );
          assert.match(message, /prime-order/);
        }
      }
    });

    await t.step("two keys naming the same point (compressed and uncompressed)", async () => {
      const both = { [pk.key]: 1, [compressed(pk.passkey)]: 1 };
      for (const kind of kinds) {
        const text = docText({ signers: both, threshold: 1 });
        await refused(h, kind, text, "invalid_authorization", "authorization.signers");
      }
    });

    await t.step("weights: 0, negative, fractional, 2^53, a string", async () => {
      for (const kind of kinds) {
        for (const weight of ["0", "-1", "1.5", "9007199254740992", '"1"', "null"]) {
          const text = `{"rules":"${crypto.randomUUID()}","authorization":` +
            `{"signers":{"${ka}":${weight},"${kb}":1},"threshold":1}}`;
          await refused(h, kind, text, "invalid_authorization", "authorization.signers");
        }
      }
    });

    await t.step("threshold: 0, negative, fractional, above the sum of the weights", async () => {
      for (const kind of kinds) {
        for (const threshold of [0, -2, 1.5, 3, "2", null]) {
          const text = docText(valid({ threshold }));
          await refused(h, kind, text, "invalid_authorization", "authorization.threshold");
        }
        // Weights are summed exactly and may reach 2^53 − 1, not pass it (the record's weight
        // must stay an exact JSON number).
        const big = { signers: { [ka]: 9007199254740990, [kb]: 1 }, threshold: 9007199254740991 };
        assert.equal((await postDocument(h, kind, docText(big))).status, 201);
        const past = { signers: { [ka]: 9007199254740991, [kb]: 1 }, threshold: 1 };
        await refused(h, kind, docText(past), "invalid_authorization", "authorization.signers");
      }
    });

    await t.step("approval_window_s: 0, 2592001, fractional, a string", async () => {
      for (const kind of kinds) {
        for (const window of [0, 2592001, 1.5, -1, "60", null]) {
          const text = docText(valid({ approval_window_s: window }));
          await refused(h, kind, text, "invalid_authorization", "authorization.approval_window_s");
        }
      }
    });

    await t.step("unsigned that is not a boolean, and an unknown member", async () => {
      for (const kind of kinds) {
        for (const unsigned of ["true", 1, null]) {
          const text = docText(valid({ unsigned }));
          await refused(h, kind, text, "invalid_authorization", "authorization.unsigned");
        }
        const text = docText(valid({ quorum: 2 }));
        await refused(h, kind, text, "invalid_authorization", "authorization.quorum");
      }
    });

    await t.step("a valid one is 201, the same bytes again 200", async () => {
      const passkeys = [await passkeySigner(), await passkeySigner({ compressed: true })];
      const sixteen = Object.fromEntries([
        ...Array.from({ length: 14 }, () => [keyText(generateEd25519Key()), 1]),
        ...passkeys.map((p) => [p.key, 2]),
      ]);
      const docs = [
        valid(),
        valid({ unsigned: true, approval_window_s: 1 }),
        valid({ unsigned: false, approval_window_s: 2592000 }),
        { signers: sixteen, threshold: 18 },
        { signers: { [ka]: 9007199254740991 }, threshold: 9007199254740991 },
      ];
      for (const kind of kinds) {
        for (const authorization of docs) {
          const text = docText(authorization);
          const id = await contentAddress(text);
          const first = await postDocument(h, kind, text);
          assert.equal(first.status, 201);
          assert.deepEqual(await first.json(), { id });
          const again = await postDocument(h, kind, text);
          assert.equal(again.status, 200);
          assert.deepEqual(await again.json(), { id });
          const path = kind === "template" ? "templates" : "policies";
          const got = await h.fetch(`/${path}/${id}`);
          assert.equal(await got.text(), text);
        }
      }
    });

    await t.step("other content types and JSON without authorization govern nothing", async () => {
      const outsider = generateEd25519Key();
      const broken = `{"authorization":{"signers":{},"threshold":0},"x":1,"x":2}`;
      const texts: [string, string][] = [
        // Not strict JSON: it cannot look governed.
        [broken, "text/plain"],
        [`\ufeff${docText(valid())}`, "application/octet-stream"],
        [`rules: ${crypto.randomUUID()}\nauthorization: none`, "text/plain"],
        [JSON.stringify({ rules: crypto.randomUUID() }), "application/json"],
        [JSON.stringify({ rules: crypto.randomUUID() }), "text/plain"],
        [JSON.stringify([{ authorization: valid() }, crypto.randomUUID()]), "application/json"],
        [JSON.stringify([{ authorization: valid() }, crypto.randomUUID()]), "text/plain"],
        [
          JSON.stringify({ nested: { authorization: valid() }, n: crypto.randomUUID() }),
          "application/json",
        ],
      ];
      for (const [text, type] of texts) {
        const template = await postDocument(h, "template", text, type);
        assert.equal(template.status, 201, `${type} ${text}`);
        const policy = await postDocument(h, "policy", text, type);
        assert.equal(policy.status, 201, `${type} ${text}`);
        const templateId = (await template.json()).id;
        const policyId = (await policy.json()).id;
        // §4 unchanged: any key's valid signature is accepted, and the record has no approval.
        for (
          const body of [
            signVariantA(newPayload(templateId), outsider),
            signVariantB(newIntent(policyId), outsider),
          ]
        ) {
          const response = await h.submit(body);
          const record = await response.json();
          assert.equal(response.status, 201, JSON.stringify(record));
          assert.equal(record.state, "accepted");
          assert.ok(!("approval" in record));
          assert.deepEqual(record.authorship, { kind: "Ed25519", signers: [keyText(outsider)] });
        }
      }
    });

    await t.step(
      "a document that looks governed, sent as anything but JSON, is refused",
      async () => {
        const looks = [
          docText(valid()),
          // Whatever its authorization holds: it is not stored to govern nothing.
          JSON.stringify({ rules: crypto.randomUUID(), authorization: "none" }),
          ` \n${JSON.stringify({ authorization: { signers: {} }, n: crypto.randomUUID() })}`,
        ];
        for (const text of looks) {
          for (
            const type of ["text/plain", "application/octet-stream", "application/ld+json", ""]
          ) {
            for (const kind of ["template", "policy"] as const) {
              const response = await postDocument(h, kind, text, type);
              await expectError(response, 400, "invalid_authorization", {
                mentions: "send it as application/json",
              });
              // Nothing stored under its content address.
              const id = base58.encode(
                new Uint8Array(
                  await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
                ),
              );
              const got = await h.fetch(`/${kind === "template" ? "templates" : "policies"}/${id}`);
              await expectError(got, 404, "not_found");
            }
          }
        }
      },
    );
  });
});
