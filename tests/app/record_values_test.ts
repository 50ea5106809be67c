/**
 * The record holds only values that were signed (docs/interface.md §4): a relayer may
 * re-send a signed body with other literals for the same doubles
 * (`9007199254740993.0` for 2^53, `-0` for 0, `1.50`, `1E2`) and other escapes
 * for the same strings; the signature still verifies, and the record's
 * `request`, as `POST /intents`, `GET /intents/{id}` and `GET /events` send
 * it, shows every number as JCS writes it and every string as the same value.
 * Checked on the raw response text: parsed JSON cannot show how a number was
 * written, and `-0` parses to a value distinct from 0 only under `Object.is`.
 */

import assert from "node:assert/strict";
import { canonicalBytes, ed25519Signature, signedBytes } from "../../client/mod.ts";
import { expectCreated, newIntent, newPayload } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { submitKit } from "../support/submit_kit.ts";

/** What the signer signs inside `attrs.fields`: the values a reader must see. */
const SIGNED_FIELDS = {
  n: 9007199254740992,
  z: 0,
  w: 0,
  f: 1.5,
  e: 100,
  x: 0.5,
  y: 1e21,
  s: "é",
  u: "😀",
  sl: "a/b",
  nl: "line\nbreak",
  ls: "\u2028",
  q: '"',
};

/** The same fields as a relayer re-sends them: other literals, the same doubles and strings. */
const SENT_FIELDS = String.raw`{"n":9007199254740993.0,"z":-0,"w":-0.0,"f":1.50,"e":1E2,"x":5E-1,` +
  String.raw`"y":1e+21,"s":"\u00e9","u":"\ud83d\ude00","sl":"a\/b","nl":"line\u000abreak",` +
  String.raw`"ls":"\u2028","q":"\u0022"}`;

/** Literals of {@link SENT_FIELDS} that must appear nowhere in what the service sends back. */
const SENT_ONLY = [
  "9007199254740993",
  ":-0",
  "1.50",
  "1E2",
  "5E-1",
  String.raw`\u00e9`,
  String.raw`\ud83d`,
  String.raw`\/`,
  String.raw`\u000a`,
  String.raw`\u0022`,
];

/** Asserts that `text` (a response body) holds `request` exactly as signed, and none of the sent literals. */
function assertSignedValuesOnly(text: string, request: unknown, where: string) {
  assert.ok(
    text.includes(`"request":${JSON.stringify(request)}`),
    `${where}: request is not the signed values: ${text}`,
  );
  for (const literal of SENT_ONLY) {
    assert.ok(!text.includes(literal), `${where}: sends back ${literal}: ${text}`);
  }
}

/** Submits `text`, then checks the 201, GET /intents/{id} and the feed's event, all as raw text. */
async function expectSignedValuesEverywhere(h: Harness, text: string, signed: unknown) {
  const response = await h.submit(text);
  const created = await response.clone().text();
  const record = await expectCreated(response);
  assertSignedValuesOnly(created, signed, "201");
  assert.ok(created.includes(`"attrs":{"fields":${JSON.stringify(SIGNED_FIELDS)}}`), created);
  // Parsed, -0 and 0 differ only under Object.is, which deepEqual (strict) applies.
  assert.deepEqual(record.request, signed);
  const inner = record.request as Record<string, { attrs: { fields: { z: number; w: number } } }>;
  const fields = (inner.payload ?? inner.intent).attrs.fields;
  assert.ok(Object.is(fields.z, 0) && Object.is(fields.w, 0));

  const got = await h.fetch(`/intents/${encodeURIComponent(record.id as string)}`, {
    headers: { authorization: h.auth },
  });
  assert.equal(got.status, 200);
  const gotText = await got.text();
  assertSignedValuesOnly(gotText, signed, "GET /intents/{id}");
  assert.equal(gotText, created);

  const feed = await h.fetch("/events?limit=1000", { headers: { authorization: h.auth } });
  assert.equal(feed.status, 200);
  const feedText = await feed.text();
  assert.ok(feedText.includes(`"record":${created}`), `the event's record: ${feedText}`);
  assertSignedValuesOnly(feedText, signed, "GET /events");
}

Deno.test("the record holds only signed values, whatever literals carried them", async (t) => {
  await withApp({}, async (h) => {
    const { templateId, policyId, key } = await submitKit(h);

    await t.step("the sent literals parse to the signed values (the premise)", () => {
      const sent = JSON.parse(SENT_FIELDS);
      assert.deepEqual(canonicalBytes(sent), canonicalBytes(SIGNED_FIELDS));
      assert.ok(Object.is(sent.z, -0));
      assert.equal(sent.n, 9007199254740992);
      assert.equal(sent.s, "é");
    });

    await t.step(
      "Variant A: 201, GET /intents/{id} and GET /events show the signed values",
      async () => {
        const payload = newPayload(templateId, { attrs: { fields: SIGNED_FIELDS } });
        const signature = ed25519Signature(payload, key);
        const text = `{"payload":{"id":${JSON.stringify(payload.id)},"template_id":${
          JSON.stringify(templateId)
        },"attrs":{"fields":${SENT_FIELDS}}},"signature":${JSON.stringify(signature)}}`;
        assert.deepEqual(
          canonicalBytes(JSON.parse(text).payload),
          signedBytes(payload),
          "the relayed payload has the signed JCS form",
        );
        await expectSignedValuesEverywhere(h, text, { payload, signature });
      },
    );

    await t.step(
      "Variant B: 201, GET /intents/{id} and GET /events show the signed values",
      async () => {
        const intent = newIntent(policyId, { attrs: { fields: SIGNED_FIELDS } });
        const signature = ed25519Signature(intent, key);
        const text = `{"authorship":{"Signed":${JSON.stringify(signature)}},"intent":{"id":${
          JSON.stringify(intent.id)
        },"policy_id":${JSON.stringify(policyId)},"attrs":{"fields":${SENT_FIELDS}}}}`;
        await expectSignedValuesEverywhere(h, text, {
          authorship: { Signed: signature },
          intent,
        });
      },
    );
  });
});
