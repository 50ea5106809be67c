/**
 * Unit tests of webhook secrets and signatures (docs/interface.md §11, Standard
 * Webhooks v1): the specification's published vector, and an independent
 * HMAC (node:crypto) over the signed content.
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import fc from "fast-check";
import {
  signatureHeader,
  signedContent,
  webhookSecretKey,
} from "@intents/protocol/webhook_signature";
import {
  deliveryHeaders,
  newWebhookSecret,
  WEBHOOK_SECRET_BYTES,
} from "../../src/webhooks/signing.ts";

// The vector of the Standard Webhooks reference libraries' tests ("sign function works").
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  msgId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

/** The signature as node:crypto computes it, from the secret's base64 decoded by Node's Buffer. */
function independentSignature(
  secret: string,
  msgId: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const mac = createHmac("sha256", key).update(`${msgId}.${timestamp}.`).update(body).digest();
  return `v1,${mac.toString("base64")}`;
}

Deno.test("signatureHeader reproduces the Standard Webhooks specification's test vector", async () => {
  const header = await signatureHeader(
    [VECTOR.secret],
    VECTOR.msgId,
    VECTOR.timestamp,
    VECTOR.body,
  );
  assert.equal(header, VECTOR.signature);
  const bytes = new TextEncoder().encode(VECTOR.body);
  assert.equal(
    await signatureHeader([VECTOR.secret], VECTOR.msgId, VECTOR.timestamp, bytes),
    VECTOR.signature,
  );
});

Deno.test("signatureHeader agrees with an independent HMAC-SHA256 on any id, time and body", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.stringMatching(/^[A-Za-z0-9_:-]{1,40}$/),
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.oneof(fc.string({ unit: "grapheme" }), fc.uint8Array({ maxLength: 300 })),
      async (key, msgId, timestamp, body) => {
        const secret = "whsec_" + Buffer.from(key).toString("base64");
        assert.equal(
          await signatureHeader([secret], msgId, timestamp, body),
          independentSignature(secret, msgId, timestamp, body),
        );
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("signatureHeader signs with every secret in force, newest first, one space apart", async () => {
  const secrets = [newWebhookSecret(), newWebhookSecret(), VECTOR.secret];
  const header = await signatureHeader(secrets, VECTOR.msgId, VECTOR.timestamp, VECTOR.body);
  const expected = secrets.map((s) =>
    independentSignature(s, VECTOR.msgId, VECTOR.timestamp, VECTOR.body)
  );
  assert.equal(header, expected.join(" "));
  assert.equal(header.split(" ")[2], VECTOR.signature);
});

Deno.test("newWebhookSecret makes whsec_ + padded base64 of 32 fresh random bytes", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(webhookSecretKey(secret).length, WEBHOOK_SECRET_BYTES);
    assert.deepEqual(
      webhookSecretKey(secret),
      new Uint8Array(Buffer.from(secret.slice(6), "base64")),
    );
    seen.add(secret);
  }
  assert.equal(seen.size, 100);
});

Deno.test("webhookSecretKey decodes strictly and refuses what is not a secret", () => {
  assert.equal(webhookSecretKey(VECTOR.secret).length, 24);
  const bad: [string, typeof TypeError | typeof RangeError][] = [
    ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", TypeError], // no prefix
    ["WHSEC_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", TypeError],
    ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", TypeError], // not a whole quantum
    ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", TypeError],
    ["whsec_ MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", TypeError],
    ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_", TypeError], // base64url alphabet
    ["whsec_" + "A".repeat(42) + "B=", TypeError], // stray bits in the last character
    ["whsec_" + "A".repeat(43), TypeError], // padding missing
    ["whsec_", RangeError],
    ["whsec_" + Buffer.alloc(23).toString("base64"), RangeError],
    ["whsec_" + Buffer.alloc(65).toString("base64"), RangeError],
  ];
  for (const [secret, error] of bad) {
    assert.throws(() => webhookSecretKey(secret), error, JSON.stringify(secret));
  }
  assert.equal(webhookSecretKey("whsec_" + Buffer.alloc(64).toString("base64")).length, 64);
});

Deno.test("signatureHeader refuses ids with a '.', bad timestamps and an empty set of secrets", async () => {
  const sign = (secrets: string[], id: string, ts: number) =>
    signatureHeader(secrets, id, ts, VECTOR.body);
  await assert.rejects(sign([], VECTOR.msgId, VECTOR.timestamp), RangeError);
  for (const id of ["", "a.b", "a b", "é", "a\r\nx-injected: 1"]) {
    await assert.rejects(sign([VECTOR.secret], id, VECTOR.timestamp), TypeError, id);
  }
  for (const ts of [-1, 1.5, NaN, Infinity, 2 ** 53]) {
    await assert.rejects(sign([VECTOR.secret], VECTOR.msgId, ts), RangeError, String(ts));
  }
  await assert.rejects(sign(["not a secret"], VECTOR.msgId, VECTOR.timestamp), TypeError);
});

Deno.test("signedContent is id, timestamp and body joined by dots, the body's bytes untouched", () => {
  const body = new Uint8Array([0x7b, 0xff, 0x00, 0x7d]);
  assert.deepEqual(
    Array.from(signedContent("evt_1", 12, body)),
    [...new TextEncoder().encode("evt_1.12."), 0x7b, 0xff, 0x00, 0x7d],
  );
  assert.equal(new TextDecoder().decode(signedContent("e", "7", "{}")), "e.7.{}");
  for (const ts of ["07", "7.0", " 7", "+7", "1e3", ""]) {
    assert.throws(() => signedContent("e", ts, "{}"), RangeError, ts);
  }
});

Deno.test("deliveryHeaders gives exactly the four headers of a Standard Webhooks delivery", async () => {
  const headers = await deliveryHeaders({
    secrets: [VECTOR.secret],
    id: VECTOR.msgId,
    timestampS: VECTOR.timestamp,
    body: VECTOR.body,
  });
  assert.deepEqual(headers, {
    "content-type": "application/json",
    "webhook-id": VECTOR.msgId,
    "webhook-timestamp": String(VECTOR.timestamp),
    "webhook-signature": VECTOR.signature,
  });
});
