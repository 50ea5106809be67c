/**
 * Edges of governed documents found by review, on the whole stack in-process
 * on a real KV: a Multisig with no signatures takes no id; a document stored
 * under a content type with which it governs nothing is not reported stored
 * when sent again as governing JSON; weights must stay exact; a HEAD of the
 * event stream holds no stream open.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { generateEd25519Key, signVariantB } from "../../client/mod.ts";
import * as inProcess from "../support/in_process.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { sleep } from "../support/time.ts";

const ADMIN_TOKEN = "governed-edges-admin-token-0123";
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

function withApp(
  fn: (call: (path: string, init?: RequestInit) => Promise<Response>) => Promise<void>,
): Promise<void> {
  return inProcess.withApp({ env: { ADMIN_TOKEN } }, (h) => fn(h.fetch));
}

function post(body: string, headers: Record<string, string> = {}): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json", ...headers }, body };
}

Deno.test("under a governed document a Multisig with no signatures is refused and takes no id", async () => {
  await withApp(async (call) => {
    const [a, b] = [generateEd25519Key(), generateEd25519Key()];
    const signers = { [base58.encode(a.publicKey)]: 1, [base58.encode(b.publicKey)]: 1 };
    const doc = JSON.stringify({ authorization: { signers, threshold: 2 } });
    const { id: policy } = await (await call("/policies", post(doc, admin))).json();
    const intent = { id: crypto.randomUUID(), policy_id: policy };
    // The quorum is public (GET /policies/{id}): anyone can copy it into an empty Multisig.
    const empty = {
      authorship: { Signed: { Multisig: { pub_key: { signers, threshold: 2 }, signatures: [] } } },
      intent,
    };
    const refused = await call("/intents", post(JSON.stringify(empty)));
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).code, "invalid_signature");
    // The id is still free for its real signer.
    const real = await call("/intents", post(JSON.stringify(signVariantB(intent, a))));
    assert.equal(real.status, 202);
  });
});

Deno.test("governing JSON sent again for bytes stored under another content type is refused", async () => {
  await inProcess.withApp({ env: { ADMIN_TOKEN } }, async (h) => {
    const call = h.fetch;
    const key = generateEd25519Key();
    const doc = JSON.stringify({
      authorization: { signers: { [base58.encode(key.publicKey)]: 1 }, threshold: 1 },
    });
    // What `curl -d` sends without a content type is refused now (it looks governed)...
    const form = { ...admin, "content-type": "application/x-www-form-urlencoded" };
    const refused = await call("/policies", post(doc, form));
    assert.equal(refused.status, 400);
    assert.match((await refused.json()).message, /send it as application\/json/);
    // ...but an earlier version stored such bytes, governing nothing.
    const bytes = new TextEncoder().encode(doc);
    const id = base58.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
    const store = new KvStore(h.kv);
    const contentType = "application/x-www-form-urlencoded";
    assert.equal(await store.putDocument("policy", id, { contentType, bytes }), "created");
    assert.equal((await store.findDocument("policy", id))?.quorum, null);
    const again = await call("/policies", post(doc, admin));
    assert.equal(again.status, 400);
    const body = await again.json();
    assert.equal(body.code, "invalid_authorization");
    assert.match(body.message, /governs nothing/);
  });
});

Deno.test("a quorum whose weights add up past 2^53−1 is refused", async () => {
  await withApp(async (call) => {
    const keys = [generateEd25519Key(), generateEd25519Key()].map((k) =>
      base58.encode(k.publicKey)
    );
    const heavy = Number.MAX_SAFE_INTEGER;
    for (const [weights, status] of [[[heavy, 1], 400], [[heavy - 1, 1], 201]] as const) {
      const doc = JSON.stringify({
        authorization: { signers: { [keys[0]]: weights[0], [keys[1]]: weights[1] }, threshold: 1 },
      });
      const response = await call("/policies", post(doc, admin));
      assert.equal(response.status, status, JSON.stringify(weights));
      if (status === 400) assert.equal((await response.json()).code, "invalid_authorization");
      else await response.body?.cancel();
    }
  });
});

Deno.test("HEAD of the event stream leaves no stream open", async () => {
  await withApp(async (call) => {
    const headers = { ...admin, accept: "text/event-stream" };
    for (let i = 0; i < 5; i++) {
      const response = await call("/events", { method: "HEAD", headers });
      assert.equal(response.status, 200);
      assert.equal(response.body, null);
    }
    await sleep(50);
    const metrics = await (await call("/metrics", { headers: admin })).text();
    assert.match(metrics, /^intents_event_streams_open 0$/m);
    // An app built without a pool verifies on the serving thread.
    assert.match(metrics, /^intents_verify_workers 0$/m);
  });
});
