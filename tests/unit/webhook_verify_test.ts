/**
 * Unit tests of the consumers' verifier `verifyWebhook` (the wire protocol's
 * `protocol/webhook_verify.ts`, which the client library exports) against
 * deliveries signed by the service's signing module (docs/interface.md §11).
 */

import assert from "node:assert/strict";
import {
  type VerifiedWebhook,
  verifyWebhook,
  type WebhookVerificationCode,
  WebhookVerificationError,
} from "../../client/mod.ts";
import { deliveryHeaders, newWebhookSecret } from "../../src/webhooks/signing.ts";

const NOW_S = 1_760_000_000;
const AT = { now: NOW_S * 1000 };
const EVENT = {
  id: "0000000000000001a7",
  type: "intent.accepted",
  record: { id: "x", state: "accepted", note: "é ✓" },
};
const BODY = JSON.stringify(EVENT);

/** A delivery as the service sends it: its headers and body. */
async function delivery(
  secrets: string[],
  options: { id?: string; timestampS?: number; body?: string } = {},
) {
  const body = options.body ?? BODY;
  const headers = await deliveryHeaders({
    secrets,
    id: options.id ?? EVENT.id,
    timestampS: options.timestampS ?? NOW_S,
    body,
  });
  return { headers, body };
}

/** Asserts that verifying rejects with a WebhookVerificationError of that code. */
async function assertRefused(
  promise: Promise<VerifiedWebhook<unknown>>,
  code: WebhookVerificationCode,
  label: string = code,
) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof WebhookVerificationError, label);
    assert.equal(error.code, code, label);
    assert.equal(error.name, "WebhookVerificationError");
    return true;
  });
}

Deno.test("verifyWebhook accepts a delivery the service signed, from Headers, records or bytes", async () => {
  const secret = newWebhookSecret();
  const { headers, body } = await delivery([secret]);
  const expected = { id: EVENT.id, timestamp: NOW_S, payload: EVENT };
  assert.deepEqual(await verifyWebhook(secret, headers, body, AT), expected);
  assert.deepEqual(await verifyWebhook(secret, new Headers(headers), body, AT), expected);
  const shouting = Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]),
  );
  assert.deepEqual(await verifyWebhook(secret, shouting, body, AT), expected);
  const bytes = new TextEncoder().encode(body);
  assert.deepEqual(await verifyWebhook(secret, headers, bytes, AT), expected);
  assert.deepEqual(
    await verifyWebhook(secret, headers, body, { now: new Date(NOW_S * 1000) }),
    expected,
  );
});

Deno.test("verifyWebhook accepts a delivery signed during a rotation with either secret", async () => {
  const [newer, older] = [newWebhookSecret(), newWebhookSecret()];
  const { headers, body } = await delivery([newer, older]);
  assert.equal(headers["webhook-signature"].split(" ").length, 2);
  assert.equal((await verifyWebhook(newer, headers, body, AT)).id, EVENT.id);
  assert.equal((await verifyWebhook(older, headers, body, AT)).id, EVENT.id);
  await assertRefused(
    verifyWebhook(newWebhookSecret(), headers, body, AT),
    "no_matching_signature",
  );
});

Deno.test("verifyWebhook finds the one matching signature among others of any version", async () => {
  const secret = newWebhookSecret();
  const { headers, body } = await delivery([secret]);
  const valid = headers["webhook-signature"];
  const other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
  for (
    const list of [
      [other, valid],
      [valid, other],
      [other, "v2," + valid.slice(3), valid, other],
      [
        "v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg==",
        valid,
      ],
      ["v1,not-base64!", "v1,", "v1", "garbage", valid],
      [other, "", valid], // two spaces
    ]
  ) {
    const signature = list.join(" ");
    const result = await verifyWebhook(
      secret,
      { ...headers, "webhook-signature": signature },
      body,
      AT,
    );
    assert.equal(result.id, EVENT.id, signature);
  }
});

Deno.test("verifyWebhook refuses a tampered body, id or timestamp", async () => {
  const secret = newWebhookSecret();
  const { headers, body } = await delivery([secret]);
  const cases: [Record<string, string>, string][] = [
    [headers, body.replace("accepted", "expired")],
    [headers, body + " "],
    [headers, body.replace("é", "e\u0301")],
    [{ ...headers, "webhook-id": "0000000000000001a8" }, body],
    [{ ...headers, "webhook-timestamp": String(NOW_S + 1) }, body],
  ];
  for (const [h, b] of cases) {
    await assertRefused(verifyWebhook(secret, h, b, AT), "no_matching_signature");
  }
});

Deno.test("verifyWebhook refuses a signature made with another secret, or truncated", async () => {
  const secret = newWebhookSecret();
  const { headers, body } = await delivery([newWebhookSecret()]);
  await assertRefused(verifyWebhook(secret, headers, body, AT), "no_matching_signature");
  const own = await delivery([secret]);
  const signature = own.headers["webhook-signature"];
  for (const cut of [signature.slice(0, 8), signature.slice(0, -4) + "====", "v1,"]) {
    const h = { ...own.headers, "webhook-signature": cut };
    await assertRefused(verifyWebhook(secret, h, own.body, AT), "no_matching_signature", cut);
  }
});

Deno.test("verifyWebhook refuses timestamps outside the tolerance, either way", async () => {
  const secret = newWebhookSecret();
  for (
    const [offset, ok] of [[-300, true], [300, true], [-301, false], [301, false], [-86400, false]]
  ) {
    const { headers, body } = await delivery([secret], { timestampS: NOW_S + Number(offset) });
    const verifying = verifyWebhook(secret, headers, body, AT);
    if (ok) assert.equal((await verifying).timestamp, NOW_S + Number(offset));
    else await assertRefused(verifying, "timestamp_out_of_tolerance", String(offset));
  }
  const old = await delivery([secret], { timestampS: NOW_S - 3600 });
  const wide = await verifyWebhook(secret, old.headers, old.body, { ...AT, toleranceS: 3600 });
  assert.equal(wide.timestamp, NOW_S - 3600);
  // The real clock by default: a delivery signed now verifies without options.
  const fresh = await delivery([secret], { timestampS: Math.floor(Date.now() / 1000) });
  assert.equal((await verifyWebhook(secret, fresh.headers, fresh.body)).id, EVENT.id);
});

Deno.test("verifyWebhook refuses missing and malformed headers", async () => {
  const secret = newWebhookSecret();
  const { headers, body } = await delivery([secret]);
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const without = { ...headers };
    delete (without as Record<string, string | undefined>)[name];
    await assertRefused(verifyWebhook(secret, without, body, AT), "missing_header", name);
    await assertRefused(
      verifyWebhook(secret, { ...headers, [name]: "" }, body, AT),
      "missing_header",
      `${name} empty`,
    );
  }
  for (
    const timestamp of [
      "hello",
      "1.5",
      "-5",
      "0x10",
      ` ${NOW_S}`,
      `0${NOW_S}`,
      "1e9",
      "12345678901234567",
    ]
  ) {
    const h = { ...headers, "webhook-timestamp": timestamp };
    await assertRefused(verifyWebhook(secret, h, body, AT), "invalid_header", timestamp);
  }
  for (const id of ["a.b", "a b", "é"]) {
    const h = { ...headers, "webhook-id": id };
    await assertRefused(verifyWebhook(secret, h, body, AT), "invalid_header", id);
  }
  await assertRefused(verifyWebhook(secret, {}, body, AT), "missing_header");
});

Deno.test("verifyWebhook refuses a signed body that is not UTF-8 JSON", async () => {
  const secret = newWebhookSecret();
  const text = await delivery([secret], { body: "not json" });
  await assertRefused(verifyWebhook(secret, text.headers, text.body, AT), "invalid_body");
  const bytes = new Uint8Array([0x22, 0xff, 0x22]);
  const headers = await deliveryHeaders({
    secrets: [secret],
    id: EVENT.id,
    timestampS: NOW_S,
    body: bytes,
  });
  await assertRefused(verifyWebhook(secret, headers, bytes, AT), "invalid_body");
});

Deno.test("verifyWebhook throws TypeError or RangeError for a caller's mistakes, not a verification error", async () => {
  const { headers, body } = await delivery([newWebhookSecret()]);
  await assert.rejects(verifyWebhook("not a secret", headers, body, AT), TypeError);
  await assert.rejects(verifyWebhook("whsec_AAAA", headers, body, AT), RangeError);
  const secret = newWebhookSecret();
  for (const toleranceS of [-1, NaN, Infinity]) {
    await assert.rejects(verifyWebhook(secret, headers, body, { ...AT, toleranceS }), RangeError);
  }
});

Deno.test("the verifier's module graph uses web APIs only, so it runs in browsers", async () => {
  const allowed: Record<string, string[]> = {
    "protocol/webhook_verify.ts": ["@scure/base", "./webhook_signature.ts", "./types.ts"],
    "protocol/webhook_signature.ts": ["@scure/base"],
    // Types only: nothing of these is loaded when the verifier runs.
    "protocol/types.ts": ["./events.ts", "./shapes.ts"],
    "protocol/shapes.ts": ["./webhook_shapes.ts"],
    "protocol/webhook_shapes.ts": [],
  };
  const typesSource = await Deno.readTextFile(new URL("../../protocol/types.ts", import.meta.url));
  assert.doesNotMatch(typesSource, /^import (?!type\b)/m, "protocol/types.ts imports types only");
  for (const [file, imports] of Object.entries(allowed)) {
    const source = await Deno.readTextFile(new URL(`../../${file}`, import.meta.url));
    const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
    const specifiers = [...code.matchAll(/^(?:import|export)\b[^;]*?from "([^"]+)"/gms)].map((m) =>
      m[1]
    );
    assert.deepEqual(specifiers.filter((s) => !imports.includes(s)), [], file);
    assert.doesNotMatch(code, /\bDeno\./, file);
  }
});
