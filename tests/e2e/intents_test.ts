/**
 * `POST /intents` and `GET /intents/{id}` end to end, against the real server
 * process: every accepted kind in each variant, the record, duplicates, the
 * order of checks, and each `invalid_body` / `invalid_signature` reason.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { p256 } from "@noble/curves/nist.js";
import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  multisigSignature,
  type Signature,
  signVariantA,
  signVariantB,
  unsignedVariantB,
} from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  type Harness,
  keyText,
  newIntent,
  newPayload,
  passkeySig,
  SoftwarePasskey,
  withHarness,
} from "../support/fixtures.ts";

type Json = Record<string, unknown>;

/** Checks the 201 record's exact shape, then that GET /intents/{id} returns the same record. */
async function expectRecord(
  h: Harness,
  response: Response,
  sent: Json,
  expected: { variant: "A" | "B"; ref: string; kind: string; signers: string[] },
): Promise<Json> {
  const record = await expectCreated(response);
  const refName = expected.variant === "A" ? "template_id" : "policy_id";
  const inner = (expected.variant === "A" ? sent.payload : sent.intent) as Json;
  const members = ["id", "variant", refName, "authorship", "received_at", "state", "request"];
  if (inner.attrs !== undefined) members.push("attrs");
  assert.deepEqual(Object.keys(record).sort(), members.sort());
  assert.equal(record.variant, expected.variant);
  assert.equal(record[refName], expected.ref);
  if (inner.attrs !== undefined) assert.deepEqual(record.attrs, inner.attrs);
  const authorship = record.authorship as { kind: string; signers: string[] };
  assert.deepEqual(Object.keys(authorship).sort(), ["kind", "signers"]);
  assert.equal(authorship.kind, expected.kind);
  assert.deepEqual([...authorship.signers].sort(), [...expected.signers].sort());
  assert.match(
    record.received_at as string,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  );
  assert.ok(Math.abs(Date.parse(record.received_at as string) - Date.now()) < 60_000);
  assert.equal(record.state, "accepted");
  assert.deepEqual(record.request, sent);

  const got = await h.fetch(`/intents/${encodeURIComponent(record.id as string)}`, {
    headers: { authorization: h.auth },
  });
  assert.equal(got.status, 200);
  assert.deepEqual(await got.json(), record);
  return record;
}

/** A 32-byte string that is not the encoding of any Ed25519 point. */
function invalidEd25519Point(): Uint8Array {
  for (let y = 2;; y++) {
    const bytes = new Uint8Array(32);
    bytes[0] = y;
    try {
      ed25519.Point.fromBytes(bytes);
    } catch {
      return bytes;
    }
  }
}

/** A compressed SEC1 encoding whose x has no point on P-256. */
function invalidCompressedP256(): Uint8Array {
  for (let x = 1;; x++) {
    const bytes = new Uint8Array(33);
    bytes[0] = 0x02;
    bytes[32] = x;
    try {
      p256.Point.fromBytes(bytes);
    } catch {
      return bytes;
    }
  }
}

function uncompressedOffCurve(): Uint8Array {
  const bytes = new Uint8Array(65);
  bytes[0] = 0x04;
  bytes[32] = 1;
  bytes[64] = 1;
  return bytes;
}

function compressed(passkey: SoftwarePasskey): string {
  return base58.encode(p256.Point.fromBytes(passkey.publicKey).toBytes(true));
}

Deno.test("POST /intents with default settings", async (t) => {
  await withHarness({}, async (h) => {
    const templateId = await h.newTemplate();
    const policyId = await h.newPolicy();
    const key = generateEd25519Key();
    const other = generateEd25519Key();
    const passkey = await SoftwarePasskey.create();
    const passkeyCompressed = await SoftwarePasskey.create({ compressed: true });

    // ---- accepted kinds ----

    await t.step("accepts Variant A signed with Ed25519", async () => {
      const payload = newPayload(templateId, {
        attrs: { fields: { amount: "12.50", nested: { list: [1, 2.5, null, true] } } },
      });
      const body = signVariantA(payload, key);
      await expectRecord(h, await h.submit(body), body as unknown as Json, {
        variant: "A",
        ref: templateId,
        kind: "Ed25519",
        signers: [keyText(key)],
      });
    });

    await t.step("accepts Variant A signed with a passkey (uncompressed key)", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload);
      assert.equal(base58.decode(signature.Passkey.pub_key).length, 65);
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts Variant A signed with a passkey (compressed key)", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkeyCompressed, payload);
      assert.equal(base58.decode(signature.Passkey.pub_key).length, 33);
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts a passkey assertion without crossOrigin and with UV clear", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload, {
        crossOrigin: undefined,
        flags: 0x01,
      });
      const body = { payload, signature };
      await expectRecord(h, await h.submit(body), body, {
        variant: "A",
        ref: templateId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step(
      "accepts Variant A Multisig of mixed Ed25519 and passkey entries meeting the threshold",
      async () => {
        const payload = newPayload(templateId, { attrs: { fields: {} } });
        const absent = generateEd25519Key();
        const signature = multisigSignature({
          signers: { [keyText(key)]: 1, [compressed(passkey)]: 2, [keyText(absent)]: 5 },
          threshold: 3,
          signatures: [ed25519Signature(payload, key), await passkeySig(passkey, payload)],
        });
        const body = { payload, signature };
        await expectRecord(h, await h.submit(body), body, {
          variant: "A",
          ref: templateId,
          kind: "Multisig",
          signers: [keyText(key), compressed(passkey)],
        });
      },
    );

    await t.step("accepts Variant B signed with Ed25519", async () => {
      const intent = newIntent(policyId, { attrs: { fields: { note: "ünïcødé ✓ 😀" } } });
      const body = signVariantB(intent, key);
      await expectRecord(h, await h.submit(body), body as unknown as Json, {
        variant: "B",
        ref: policyId,
        kind: "Ed25519",
        signers: [keyText(key)],
      });
    });

    await t.step("accepts Variant B signed with a passkey", async () => {
      const intent = newIntent(policyId);
      const signature = await passkeySig(passkeyCompressed, intent);
      const body = { authorship: { Signed: signature }, intent };
      await expectRecord(h, await h.submit(body), body, {
        variant: "B",
        ref: policyId,
        kind: "Passkey",
        signers: [signature.Passkey.pub_key],
      });
    });

    await t.step("accepts Variant B signed with a Multisig", async () => {
      const intent = newIntent(policyId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 2, [keyText(other)]: 2, [base58.encode(passkey.publicKey)]: 1 },
        threshold: 5,
        signatures: [
          ed25519Signature(intent, other),
          await passkeySig(passkey, intent),
          ed25519Signature(intent, key),
        ],
      });
      const body = { authorship: { Signed: signature }, intent };
      await expectRecord(h, await h.submit(body), body, {
        variant: "B",
        ref: policyId,
        kind: "Multisig",
        signers: [keyText(key), keyText(other), base58.encode(passkey.publicKey)],
      });
    });

    await t.step("accepts a payload id of 128 characters", async () => {
      const payload = newPayload(templateId, { id: "x".repeat(127) + "😀" });
      const body = signVariantA(payload, key);
      const record = await expectCreated(await h.submit(body));
      assert.equal(record.id, payload.id);
    });

    await t.step("stores a UUID id lower-cased and finds it in either case", async () => {
      const upper = crypto.randomUUID().toUpperCase();
      const intent = newIntent(policyId, { id: upper });
      const record = await expectCreated(await h.submit(signVariantB(intent, key)));
      assert.equal(record.id, upper.toLowerCase());
      for (const id of [upper, upper.toLowerCase()]) {
        const got = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
        assert.equal(got.status, 200);
        assert.deepEqual(await got.json(), record);
      }
    });

    await t.step("rejects a second UUID id differing only in case with 409", async () => {
      const lower = crypto.randomUUID();
      await expectCreated(await h.submit(signVariantB(newIntent(policyId, { id: lower }), key)));
      const again = signVariantB(newIntent(policyId, { id: lower.toUpperCase() }), other);
      await expectError(await h.submit(again), 409, "intent_exists");
    });

    await t.step("treats a Variant A UUID id the same way", async () => {
      const lower = crypto.randomUUID();
      await expectCreated(await h.submit(signVariantA(newPayload(templateId, { id: lower }), key)));
      const again = signVariantA(newPayload(templateId, { id: lower.toUpperCase() }), key);
      await expectError(await h.submit(again), 409, "intent_exists");
    });

    // ---- 409 and the order of checks ----

    await t.step("rejects a resubmission of the same body with 409 intent_exists", async () => {
      const body = signVariantA(newPayload(templateId), key);
      await expectCreated(await h.submit(body));
      await expectError(await h.submit(body), 409, "intent_exists");
      const byOther = signVariantA(body.payload, other);
      await expectError(await h.submit(byOther), 409, "intent_exists");
    });

    await t.step(
      "answers a bad signature for an existing id with 400 invalid_signature, not 409",
      async () => {
        const body = signVariantA(newPayload(templateId), key);
        await expectCreated(await h.submit(body));
        const forged = signVariantA(body.payload, other);
        (forged.signature as { Ed25519: { pub_key: string } }).Ed25519.pub_key = keyText(key);
        await expectError(await h.submit(forged), 400, "invalid_signature");

        const intentBody = signVariantB(newIntent(policyId), key);
        await expectCreated(await h.submit(intentBody));
        const tampered = structuredClone(intentBody);
        tampered.intent.attrs = { fields: { x: 1 } };
        await expectError(await h.submit(tampered), 400, "invalid_signature");
      },
    );

    await t.step(
      "answers a missing template with a valid signature for an existing id with 400",
      async () => {
        const body = signVariantA(newPayload(templateId), key);
        await expectCreated(await h.submit(body));
        const missing = signVariantA({ ...body.payload, template_id: "NoSuchTemplate" }, key);
        await expectError(await h.submit(missing), 400, "template_not_found", {
          mentions: "payload.template_id",
        });
      },
    );

    await t.step("rejects an unknown template with 400 template_not_found", async () => {
      const body = signVariantA(newPayload("11111111111111111111111111111111"), key);
      await expectError(await h.submit(body), 400, "template_not_found", {
        mentions: "payload.template_id",
      });
    });

    await t.step("rejects an unknown policy with 400 policy_not_found", async () => {
      const body = signVariantB(newIntent("NoSuchPolicy"), key);
      await expectError(await h.submit(body), 400, "policy_not_found", {
        mentions: "intent.policy_id",
      });
    });

    await t.step("does not accept a policy id as a template id, nor the reverse", async () => {
      await expectError(
        await h.submit(signVariantA(newPayload(policyId), key)),
        400,
        "template_not_found",
      );
      await expectError(
        await h.submit(signVariantB(newIntent(templateId), key)),
        400,
        "policy_not_found",
      );
    });

    await t.step("rejects Unsigned authorship by default with unsigned_not_permitted", async () => {
      const body = unsignedVariantB(newIntent(policyId));
      await expectError(await h.submit(body), 400, "unsigned_not_permitted", {
        mentions: "authorship",
      });
      const got = await h.fetch(`/intents/${body.intent.id}`, {
        headers: { authorization: h.auth },
      });
      assert.equal(got.status, 404);
      await got.body?.cancel();
    });

    // ---- invalid_body ----

    const goodA = () => signVariantA(newPayload(templateId), key) as unknown as Json;
    const goodB = () => signVariantB(newIntent(policyId), key) as unknown as Json;
    const invalidBody = async (body: unknown, mentions: string | string[], notEcho?: string) => {
      await expectError(await h.submit(body), 400, "invalid_body", { mentions, notEcho });
    };

    await t.step("rejects a body that selects no variant", async () => {
      const a = goodA();
      const b = goodB();
      for (
        const body of [
          {},
          { payload: a.payload },
          { signature: a.signature },
          { ...a, extra: 1 },
          { payload: a.payload, intent: b.intent },
          { ...a, ...b },
          { authorship: b.authorship },
          [],
          "payload",
          42,
          null,
        ]
      ) {
        const message = await expectError(
          await h.submit(JSON.stringify(body)),
          400,
          "invalid_body",
        );
        assert.match(message, /^body: /);
      }
    });

    await t.step("rejects an unknown member inside payload", async () => {
      const body = goodA();
      (body.payload as Json).extra = 1;
      await invalidBody(body, "payload.extra");
    });

    await t.step("rejects an unknown member inside intent", async () => {
      const body = goodB();
      (body.intent as Json).comment = "x";
      await invalidBody(body, "intent.comment");
    });

    await t.step("rejects an unknown member inside attrs but not inside attrs.fields", async () => {
      const body = goodA();
      (body.payload as Json).attrs = { fields: {}, extra: true };
      await invalidBody(body, "payload.attrs.extra");
      const free = signVariantA(
        newPayload(templateId, { attrs: { fields: { anything: { at: ["all", { x: 1 }] } } } }),
        key,
      );
      await expectCreated(await h.submit(free));
    });

    await t.step("rejects an unknown member inside each signature kind", async () => {
      const a = goodA();
      const sig = a.signature as { Ed25519: Json };
      sig.Ed25519.extra = "x";
      await invalidBody(a, "signature.Ed25519.extra");

      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      pk.Passkey.user_handle = "x";
      await invalidBody({ payload, signature: pk }, "signature.Passkey.user_handle");

      const ms = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      }) as unknown as { Multisig: Json & { pub_key: Json } };
      ms.Multisig.extra = 1;
      await invalidBody({ payload, signature: ms }, "signature.Multisig.extra");
      delete ms.Multisig.extra;
      ms.Multisig.pub_key.extra = 1;
      await invalidBody({ payload, signature: ms }, "signature.Multisig.pub_key.extra");
    });

    await t.step("rejects a signature object naming two kinds or an unknown kind", async () => {
      const payload = newPayload(templateId);
      const both = { ...ed25519Signature(payload, key), ...(await passkeySig(passkey, payload)) };
      await invalidBody({ payload, signature: both }, "signature");
      await invalidBody({ payload, signature: { Rsa: { pub_key: "x" } } }, "signature.Rsa");
      await invalidBody({ payload, signature: {} }, "signature");
      await invalidBody({ payload, signature: "Ed25519" }, "signature");
    });

    await t.step("rejects an unknown member beside Signed in authorship", async () => {
      const body = goodB() as { authorship: Json };
      body.authorship.extra = 1;
      await invalidBody(body, "authorship");
      await invalidBody({ ...goodB(), authorship: "unsigned" }, "authorship");
      await invalidBody({ ...goodB(), authorship: null }, "authorship");
    });

    await t.step("rejects attrs: null", async () => {
      const payload = { ...newPayload(templateId), attrs: null };
      await invalidBody(
        { payload, signature: ed25519Signature(payload as never, key) },
        "payload.attrs",
      );
      const intent = { ...newIntent(policyId), attrs: null };
      await invalidBody(
        { authorship: { Signed: ed25519Signature(intent as never, key) }, intent },
        "intent.attrs",
      );
    });

    await t.step("rejects attrs without fields or with a non-object fields", async () => {
      for (const attrs of [{}, { fields: [] }, { fields: null }, { fields: "x" }, []]) {
        const payload = { ...newPayload(templateId), attrs };
        await invalidBody(
          { payload, signature: ed25519Signature(payload as never, key) },
          "payload.attrs",
        );
      }
    });

    await t.step("rejects missing required fields, naming each", async () => {
      const a = goodA();
      delete (a.payload as Json).id;
      await invalidBody(a, "payload.id");
      const a2 = goodA();
      delete (a2.payload as Json).template_id;
      await invalidBody(a2, "payload.template_id");
      const b = goodB();
      delete (b.intent as Json).policy_id;
      await invalidBody(b, "intent.policy_id");
      const b2 = goodB();
      delete (b2.intent as Json).id;
      await invalidBody(b2, "intent.id");
      const a3 = goodA();
      delete (a3.signature as { Ed25519: Json }).Ed25519.signature;
      await invalidBody(a3, "signature.Ed25519.signature");
      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      delete pk.Passkey.client_data;
      await invalidBody({ payload, signature: pk }, "signature.Passkey.client_data");
    });

    await t.step("rejects a Variant B id that is not a UUID", async () => {
      for (const id of ["not-a-uuid", "", "123e4567-e89b-12d3-a456-42661417400", 7]) {
        const intent = { id, policy_id: policyId };
        await invalidBody(
          { authorship: { Signed: ed25519Signature(intent as never, key) }, intent },
          "intent.id",
          typeof id === "string" && id.length > 0 ? id : undefined,
        );
      }
    });

    await t.step(
      "rejects a Variant A id that is empty, too long or has control characters",
      async () => {
        for (
          const id of ["", "x".repeat(129), "a\u0007b", "line\nbreak", "c1\u0085", "del\u007f"]
        ) {
          const payload = newPayload(templateId, { id });
          await invalidBody(
            signVariantA(payload, key),
            "payload.id",
            id.length > 2 ? id : undefined,
          );
        }
      },
    );

    await t.step("rejects a template_id or policy_id that is empty or too long", async () => {
      for (const ref of ["", "T".repeat(129)]) {
        await invalidBody(signVariantA(newPayload(ref), key), "payload.template_id");
        await invalidBody(signVariantB(newIntent(ref), key), "intent.policy_id");
      }
    });

    await t.step("rejects bad base58 in each binary field, without echoing it", async () => {
      const bad = "0OIl0OIl";
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = bad;
      await invalidBody(a, "signature.Ed25519.pub_key", bad);
      const a2 = goodA() as { signature: { Ed25519: Json } };
      a2.signature.Ed25519.signature = bad;
      await invalidBody(a2, "signature.Ed25519.signature", bad);
      for (const field of ["authenticator_data", "pub_key", "signature"]) {
        const payload = newPayload(templateId);
        const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
        pk.Passkey[field] = bad;
        await invalidBody({ payload, signature: pk }, `signature.Passkey.${field}`, bad);
      }
      const b = goodB() as { authorship: { Signed: { Ed25519: Json } } };
      b.authorship.Signed.Ed25519.pub_key = bad;
      await invalidBody(b, "authorship.Signed.Ed25519.pub_key", bad);
    });

    await t.step("rejects wrong key and signature lengths", async () => {
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = base58.encode(new Uint8Array(31).fill(7));
      await invalidBody(a, "signature.Ed25519.pub_key");
      const a2 = goodA() as { signature: { Ed25519: Json } };
      a2.signature.Ed25519.pub_key = base58.encode(new Uint8Array(33).fill(7));
      await invalidBody(a2, "signature.Ed25519.pub_key");
      const a3 = goodA() as { signature: { Ed25519: Json } };
      const sig = base58.decode(a3.signature.Ed25519.signature as string);
      a3.signature.Ed25519.signature = base58.encode(sig.subarray(0, 63));
      await invalidBody(a3, "signature.Ed25519.signature");
      const payload = newPayload(templateId);
      const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
      pk.Passkey.pub_key = base58.encode(passkey.publicKey.subarray(0, 64));
      await invalidBody({ payload, signature: pk }, "signature.Passkey.pub_key");
    });

    await t.step("rejects public keys that are not valid points", async () => {
      const a = goodA() as { signature: { Ed25519: Json } };
      a.signature.Ed25519.pub_key = base58.encode(invalidEd25519Point());
      await invalidBody(a, "signature.Ed25519.pub_key");
      for (const point of [uncompressedOffCurve(), invalidCompressedP256()]) {
        const payload = newPayload(templateId);
        const pk = await passkeySig(passkey, payload) as unknown as { Passkey: Json };
        pk.Passkey.pub_key = base58.encode(point);
        await invalidBody({ payload, signature: pk }, "signature.Passkey.pub_key");
      }
      const payload = newPayload(templateId);
      const ms = multisigSignature({
        signers: { [base58.encode(uncompressedOffCurve())]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidBody({ payload, signature: ms }, "signature.Multisig.pub_key.signers");
    });

    await t.step("rejects a Multisig nested in a Multisig", async () => {
      const payload = newPayload(templateId);
      const inner = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      const outer = {
        Multisig: {
          pub_key: { signers: { [keyText(key)]: 1 }, threshold: 1 },
          signatures: [inner],
        },
      };
      await invalidBody({ payload, signature: outer }, "signature.Multisig.signatures[0]");
    });

    await t.step("rejects more than 16 signers or 16 signatures", async () => {
      const payload = newPayload(templateId);
      const keys = Array.from({ length: 17 }, () => generateEd25519Key());
      const signers = Object.fromEntries(keys.map((k) => [keyText(k), 1]));
      const many = multisigSignature({
        signers,
        threshold: 1,
        signatures: [ed25519Signature(payload, keys[0])],
      });
      await invalidBody({ payload, signature: many }, "signature.Multisig.pub_key.signers");

      const sixteen = Object.fromEntries(keys.slice(0, 16).map((k) => [keyText(k), 1]));
      const entries = keys.map((k) => ed25519Signature(payload, k));
      const tooManyEntries = multisigSignature({
        signers: sixteen,
        threshold: 1,
        signatures: entries,
      });
      await invalidBody({ payload, signature: tooManyEntries }, "signature.Multisig.signatures");

      const ok = multisigSignature({
        signers: sixteen,
        threshold: 16,
        signatures: entries.slice(0, 16),
      });
      await expectCreated(await h.submit({ payload, signature: ok }));
    });

    await t.step(
      "rejects zero, negative, fractional and unsafe weights and thresholds",
      async () => {
        const payload = newPayload(templateId);
        const entry = ed25519Signature(payload, key);
        const bodyWith = (weight: string, threshold: string) =>
          `{"payload":${JSON.stringify(payload)},"signature":{"Multisig":{"pub_key":{"signers":{"${
            keyText(key)
          }":${weight}},"threshold":${threshold}},"signatures":[${JSON.stringify(entry)}]}}}`;
        for (const weight of ["0", "-1", "1.5", "9.007199254740992e15", '"1"', "null"]) {
          await invalidBody(bodyWith(weight, "1"), "signature.Multisig.pub_key.signers");
        }
        for (const threshold of ["0", "-2", "0.5", "1e16", '"1"']) {
          await invalidBody(bodyWith("1", threshold), "signature.Multisig.pub_key.threshold");
        }
        await expectCreated(await h.submit(bodyWith("1", "1")));
      },
    );

    await t.step(
      "rejects a signer named twice, including compressed and uncompressed forms of one P-256 key",
      async () => {
        const payload = newPayload(templateId);
        const signature = multisigSignature({
          signers: { [base58.encode(passkey.publicKey)]: 1, [compressed(passkey)]: 1 },
          threshold: 1,
          signatures: [await passkeySig(passkey, payload)],
        });
        await invalidBody({ payload, signature }, "signature.Multisig.pub_key.signers");
      },
    );

    await t.step("rejects a Multisig with no signers", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: {},
        threshold: 1,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidBody({ payload, signature }, "signature.Multisig.pub_key.signers");
    });

    // ---- invalid_signature ----

    const invalidSignature = async (body: unknown, mentions?: string) => {
      await expectError(await h.submit(body), 400, "invalid_signature", { mentions });
    };

    await t.step("rejects an Ed25519 signature made with another key", async () => {
      const payload = newPayload(templateId);
      const signature = ed25519Signature(payload, other);
      signature.Ed25519.pub_key = keyText(key);
      await invalidSignature({ payload, signature }, "signature.Ed25519");
      const intent = newIntent(policyId);
      const signed = ed25519Signature(intent, other);
      signed.Ed25519.pub_key = keyText(key);
      await invalidSignature({ authorship: { Signed: signed }, intent }, "authorship.Signed");
    });

    await t.step("rejects a signature over a tampered payload", async () => {
      const body = signVariantA(newPayload(templateId, { attrs: { fields: { n: 1 } } }), key);
      body.payload.attrs = { fields: { n: 2 } };
      await invalidSignature(body, "signature.Ed25519");
    });

    await t.step("rejects an Ed25519 signature over non-JCS bytes", async () => {
      // Members out of JCS order and with white space: the same JSON value, other bytes.
      const payload = { template_id: templateId, id: `intent-${crypto.randomUUID()}` };
      const text = JSON.stringify(payload, null, 1);
      const signature = ed25519.sign(new TextEncoder().encode(text), key.secretKey);
      await invalidSignature({
        payload,
        signature: {
          Ed25519: { pub_key: keyText(key), signature: base58.encode(signature) },
        },
      }, "signature.Ed25519");
    });

    await t.step("verifies against the JCS form whatever the member order sent", async () => {
      const payload = newPayload(templateId, {
        attrs: { fields: { b: 1, a: [2, { d: 3, c: 4 }] } },
      });
      const signature = ed25519Signature(payload, key);
      const reordered = `{"signature":${JSON.stringify(signature)},"payload":{"template_id":${
        JSON.stringify(payload.template_id)
      },"attrs":{"fields":{"a":[2,{"c":4,"d":3}],"b":1}},"id":${JSON.stringify(payload.id)}}}`;
      const record = await expectCreated(await h.submit(reordered));
      assert.deepEqual(record.request, JSON.parse(reordered));
    });

    const passkeyNegatives: [string, Parameters<typeof passkeySig>[2], string][] = [
      ["from another origin", { origin: "https://evil.example" }, "origin"],
      [
        "with the wrong challenge",
        { challenge: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
        "challenge",
      ],
      ["with crossOrigin true", { crossOrigin: true }, "crossOrigin"],
      ["with the user-present flag clear", { flags: 0x04 }, "presence"],
      ["for another relying party", { rpId: "evil.example" }, "rpIdHash"],
      ["of another type", { type: "webauthn.create" }, "type"],
    ];
    for (const [name, options, reason] of passkeyNegatives) {
      await t.step(`rejects a passkey assertion ${name}`, async () => {
        const payload = newPayload(templateId);
        const signature = await passkeySig(passkey, payload, options);
        const message = await expectError(
          await h.submit({ payload, signature }),
          400,
          "invalid_signature",
          { mentions: "signature.Passkey" },
        );
        assert.ok(message.includes(reason), message);
        const intent = newIntent(policyId);
        const signed = await passkeySig(passkeyCompressed, intent, options);
        await invalidSignature({ authorship: { Signed: signed }, intent }, "authorship.Signed");
      });
    }

    await t.step("rejects a passkey signature by another key", async () => {
      const payload = newPayload(templateId);
      const signature = await passkeySig(passkey, payload);
      signature.Passkey.pub_key = base58.encode(passkeyCompressed.publicKey);
      await invalidSignature({ payload, signature }, "signature.Passkey");
    });

    await t.step("rejects a Multisig entry whose key is not a signer", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 5 },
        threshold: 1,
        signatures: [ed25519Signature(payload, key), ed25519Signature(payload, other)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig.signatures[1]");
    });

    await t.step("rejects a Multisig signer who signs twice", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 1, [compressed(passkey)]: 1 },
        threshold: 2,
        signatures: [await passkeySig(passkey, payload), await passkeySig(passkey, payload)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig.signatures[1]");
      const twiceEd = multisigSignature({
        signers: { [keyText(key)]: 1 },
        threshold: 2,
        signatures: [ed25519Signature(payload, key), ed25519Signature(payload, key)],
      });
      await invalidSignature({ payload, signature: twiceEd }, "signature.Multisig");
    });

    await t.step("rejects a Multisig whose signers do not reach the threshold", async () => {
      const payload = newPayload(templateId);
      const signature = multisigSignature({
        signers: { [keyText(key)]: 2, [keyText(other)]: 2 },
        threshold: 3,
        signatures: [ed25519Signature(payload, key)],
      });
      await invalidSignature({ payload, signature }, "signature.Multisig");
      const none = multisigSignature({
        signers: { [keyText(key)]: 2 },
        threshold: 1,
        signatures: [],
      });
      await invalidSignature({ payload, signature: none }, "signature.Multisig");
    });

    await t.step("rejects a Multisig with one entry that does not verify", async () => {
      const intent = newIntent(policyId);
      const bad = await passkeySig(passkey, intent, { origin: "https://evil.example" });
      const signature = multisigSignature({
        signers: { [keyText(key)]: 5, [base58.encode(passkey.publicKey)]: 1 },
        threshold: 5,
        signatures: [ed25519Signature(intent, key), bad],
      });
      await invalidSignature(
        { authorship: { Signed: signature }, intent },
        "authorship.Signed.Multisig.signatures[1]",
      );
    });

    await t.step("stores nothing for a request that fails", async () => {
      const payload = newPayload(templateId);
      const signature = ed25519Signature(payload, other);
      signature.Ed25519.pub_key = keyText(key);
      await invalidSignature({ payload, signature });
      const got = await h.fetch(`/intents/${payload.id}`, { headers: { authorization: h.auth } });
      await expectError(got, 404, "not_found");
      await expectCreated(await h.submit(signVariantA(payload, key)));
    });
  });
});

Deno.test("POST /intents with ALLOW_UNSIGNED=true and PASSKEY_REQUIRE_UV=true", async (t) => {
  await withHarness(
    { env: { ALLOW_UNSIGNED: "true", PASSKEY_REQUIRE_UV: "true" } },
    async (h) => {
      const policyId = await h.newPolicy();
      const templateId = await h.newTemplate();
      const passkey = await SoftwarePasskey.create();

      await t.step("accepts Variant B Unsigned", async () => {
        const body = unsignedVariantB(newIntent(policyId, { attrs: { fields: { a: 1 } } }));
        await expectRecord(h, await h.submit(body), body as unknown as Json, {
          variant: "B",
          ref: policyId,
          kind: "Unsigned",
          signers: [],
        });
      });

      await t.step("still checks the policy of an Unsigned intent", async () => {
        const body = unsignedVariantB(newIntent("NoSuchPolicy"));
        await expectError(await h.submit(body), 400, "policy_not_found");
      });

      await t.step("rejects a second Unsigned intent with the same id with 409", async () => {
        const body = unsignedVariantB(newIntent(policyId));
        await expectCreated(await h.submit(body));
        await expectError(await h.submit(body), 409, "intent_exists");
      });

      await t.step("has no Unsigned form in Variant A", async () => {
        const payload = newPayload(templateId);
        await expectError(
          await h.submit({ payload, signature: "Unsigned" }),
          400,
          "invalid_body",
          { mentions: "signature" },
        );
      });

      await t.step("rejects a passkey assertion with the user-verified flag clear", async () => {
        const payload = newPayload(templateId);
        const signature = await passkeySig(passkey, payload, { flags: 0x01 });
        const message = await expectError(
          await h.submit({ payload, signature }),
          400,
          "invalid_signature",
          { mentions: "signature.Passkey" },
        );
        assert.match(message, /verif/);
      });

      await t.step("accepts a passkey assertion with the user-verified flag set", async () => {
        const payload = newPayload(templateId);
        const signature: Signature = await passkeySig(passkey, payload, { flags: 0x05 });
        await expectCreated(await h.submit({ payload, signature }));
      });
    },
  );
});
