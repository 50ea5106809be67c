/**
 * The client library's calls (`IntentsClient`) against the whole service
 * in process, reached through its `fetch` option: typed records for every
 * signature kind, bodies sent as given, refusals as `IntentsError`s, the
 * admin token, configuration and documents.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  ed25519Signature,
  generateEd25519Key,
  IntentsClient,
  IntentsError,
  multisigSignature,
  passkeySignature,
  signedBytes,
  signVariantA,
  signVariantB,
  unsignedVariantB,
  variantABody,
  variantBBody,
} from "../../client/mod.ts";
import { SoftwarePasskey } from "../../testing/software_passkey.ts";
import { withApp } from "../support/in_process.ts";

const ADMIN_TOKEN = "client-test-admin-token-0123";
const ORIGIN = "http://localhost:8000";
const SPKI_PREFIX = Uint8Array.from(
  "3059301306072a8648ce3d020106082a8648ce3d030107034200".match(/../g)!,
  (h) => parseInt(h, 16),
);

/** The whole server stack in-process, reached through the client's `fetch` option. */
async function withService(
  fn: (client: IntentsClient, ids: { template: string; policy: string }) => Promise<void>,
  env: Record<string, string> = {},
) {
  await withApp({ env: { ADMIN_TOKEN, PASSKEY_ORIGINS: ORIGIN, ...env } }, async ({ handle }) => {
    const client = new IntentsClient({
      url: "http://service.test/",
      token: ADMIN_TOKEN,
      fetch: handle,
    });
    const template = (await client.addTemplate('{"t":1}')).id;
    const policy = (await client.addPolicy('{"p":1}')).id;
    await fn(client, { template, policy });
  });
}

/** An assertion as `navigator.credentials.get` returns it, from the software passkey. */
async function webAuthnAssertion(passkey: SoftwarePasskey, bytes: Uint8Array) {
  const body = await passkey.assert(bytes, { origin: ORIGIN });
  const spki = new Uint8Array(91);
  spki.set(SPKI_PREFIX, 0);
  spki.set(passkey.publicKey, 26);
  return {
    body,
    assertion: {
      authenticatorData: base58.decode(body.authenticator_data),
      clientDataJSON: new TextEncoder().encode(body.client_data),
      signature: base58.decode(body.signature),
      publicKey: spki,
    },
  };
}

Deno.test("submit and get return typed records for every signature kind", async () => {
  await withService(async (client, ids) => {
    const key = generateEd25519Key();
    const a = await client.submit(signVariantA({ id: "a-1", template_id: ids.template }, key));
    assert.equal(a.variant, "A");
    assert.equal(a.template_id, ids.template);
    assert.deepEqual(a.authorship, { kind: "Ed25519", signers: [base58.encode(key.publicKey)] });
    assert.deepEqual(await client.getIntent("a-1"), a);

    const intent = { id: crypto.randomUUID(), policy_id: ids.policy, attrs: { fields: { x: 1 } } };
    const b = await client.submit(signVariantB(intent, key));
    assert.equal(b.variant, "B");
    assert.deepEqual(b.attrs, { fields: { x: 1 } });

    // A passkey assertion assembled from what the browser hands back.
    const passkey = await SoftwarePasskey.create();
    const payload = { id: "a-passkey", template_id: ids.template };
    const { body, assertion } = await webAuthnAssertion(passkey, signedBytes(payload));
    const assembled = passkeySignature(assertion);
    assert.deepEqual(assembled, { Passkey: body });
    const pk = await client.submit(variantABody(payload, assembled));
    assert.deepEqual(pk.authorship, {
      kind: "Passkey",
      signers: [base58.encode(passkey.publicKey)],
    });

    // A 2-of-3 multisig signed by an Ed25519 key and a passkey.
    const msIntent = { id: crypto.randomUUID(), policy_id: ids.policy };
    const bytes = signedBytes(msIntent);
    const absent = generateEd25519Key();
    const multisig = multisigSignature({
      signers: {
        [base58.encode(key.publicKey)]: 1,
        [base58.encode(passkey.publicKey)]: 1,
        [base58.encode(absent.publicKey)]: 1,
      },
      threshold: 2,
      signatures: [
        ed25519Signature(msIntent, key),
        passkeySignature((await webAuthnAssertion(passkey, bytes)).assertion),
      ],
    });
    const ms = await client.submit(variantBBody(msIntent, multisig));
    assert.equal(ms.authorship.kind, "Multisig");
    assert.equal(ms.authorship.signers.length, 2);

    const page = await client.listIntents({ limit: 2 });
    assert.equal(page.items.length, 2);
    assert.equal(page.items[0].id, msIntent.id);
    assert.equal(typeof page.cursor, "string");
  });
});

Deno.test("submit sends text and bytes exactly as given", async () => {
  await withService(async (client, ids) => {
    const key = generateEd25519Key();
    const body = signVariantA({ id: "spaced", template_id: ids.template }, key);
    const text = `{ "payload" : ${JSON.stringify(body.payload)},\n "signature": ${
      JSON.stringify(body.signature)
    } }`;
    const record = await client.submit(new TextEncoder().encode(text));
    assert.equal(record.id, "spaced");
    const second = signVariantA({ id: "as-text", template_id: ids.template }, key);
    assert.equal((await client.submit(JSON.stringify(second))).id, "as-text");
  });
});

Deno.test("service refusals are IntentsErrors carrying status and code", async () => {
  await withService(async (client, ids) => {
    const key = generateEd25519Key();
    const body = signVariantA({ id: "dup", template_id: ids.template }, key);
    const record = await client.submit(body);
    // The same body again resolves with the record (the service replays it); another
    // signature for the id is refused.
    assert.deepEqual(await client.submit(body), record);
    const taken = signVariantA(body.payload, generateEd25519Key());
    await assert.rejects(client.submit(taken), (error: unknown) => {
      assert.ok(error instanceof IntentsError);
      assert.equal(error.status, 409);
      assert.equal(error.code, "intent_exists");
      assert.equal(error.message, "an intent with this id already exists");
      return true;
    });
    await assert.rejects(
      client.submit(unsignedVariantB({ id: crypto.randomUUID(), policy_id: ids.policy })),
      { name: "IntentsError", status: 400, code: "unsigned_not_permitted" },
    );
    await assert.rejects(
      client.submit(signVariantA({ id: "x", template_id: "no-such-template" }, key)),
      { status: 400, code: "template_not_found" },
    );
    await assert.rejects(client.getIntent("missing"), { status: 404, code: "not_found" });
  });
});

Deno.test("admin calls without the token are refused with unauthorized", async () => {
  await withApp({ env: { ADMIN_TOKEN } }, async ({ handle }) => {
    const client = new IntentsClient({ url: "http://service.test", fetch: handle });
    await assert.rejects(client.listIntents(), { status: 401, code: "unauthorized" });
    await assert.rejects(client.addTemplate("x"), { status: 401, code: "unauthorized" });
    await assert.rejects(client.getConfig(), { status: 401, code: "unauthorized" });
    assert.deepEqual(await client.health(), { status: "ok" });
  });
});

Deno.test("config calls return the ETag and honour If-Match", async () => {
  await withService(async (client) => {
    const initial = await client.getConfig();
    assert.equal(initial.evidence_extractor_url, "");
    assert.ok(initial.etag);
    const set = await client.setConfig("https://extractor.example/v1", { ifMatch: initial.etag! });
    assert.equal(set.effective_url, "https://extractor.example/v1");
    await assert.rejects(client.setConfig("", { ifMatch: initial.etag! }), {
      status: 412,
      code: "precondition_failed",
    });
  });
});

Deno.test("stored documents read back byte for byte", async () => {
  await withService(async (client) => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    const { id, created } = await client.addTemplate(bytes, "application/octet-stream");
    assert.equal(created, true);
    assert.equal((await client.addTemplate(bytes, "application/octet-stream")).created, false);
    const got = await client.getTemplate(id);
    assert.deepEqual(got.bytes, bytes);
    assert.equal(got.contentType, "application/octet-stream");
    await assert.rejects(client.getPolicy(id), { status: 404, code: "not_found" });
  });
});
