/**
 * Documents with rules (docs/interface.md §15) are stored where versions
 * before rules do not look, `["ruled_templates", id]` / `["ruled_policies",
 * id]`; documents without rules stay where they always were. This version
 * reads both, and an intent's commit checks the one its reference came from.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { KvStore } from "../../src/storage/kv_store.ts";
import type { DocumentKind } from "../../src/domain/intent.ts";
import { smallIntent } from "../support/store_kit.ts";

const key = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const encoder = new TextEncoder();

const json = (value: unknown) => ({
  contentType: "application/json",
  bytes: encoder.encode(JSON.stringify(value)),
});
const ruledDoc = json({
  authorization: { signers: { [key]: 1 }, threshold: 1, rules: [{ when: "true", threshold: 1 }] },
});
const plainDoc = json({ authorization: { signers: { [key]: 1 }, threshold: 1 } });

async function withStore(fn: (store: KvStore, kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(new KvStore(kv), kv);
  } finally {
    kv.close();
  }
}

Deno.test("a document with rules goes under ruled_*, one without where it always was", async () => {
  await withStore(async (store, kv) => {
    const cases: [DocumentKind, string][] = [["template", "templates"], ["policy", "policies"]];
    for (const [kind, plural] of cases) {
      assert.equal(await store.putDocument(kind, "R", ruledDoc, { ruled: true }), "created");
      assert.equal(await store.putDocument(kind, "P", plainDoc), "created");
      assert.equal((await kv.get([plural, "R"])).versionstamp, null);
      assert.notEqual((await kv.get([`ruled_${plural}`, "R"])).versionstamp, null);
      assert.notEqual((await kv.get([plural, "P"])).versionstamp, null);
      assert.equal((await kv.get([`ruled_${plural}`, "P"])).versionstamp, null);
      // Stored again, either way: it exists.
      assert.equal(await store.putDocument(kind, "R", ruledDoc, { ruled: true }), "exists");
      assert.equal(await store.putDocument(kind, "P", plainDoc, { ruled: true }), "exists");
    }
  });
});

Deno.test("this version finds both, and an intent under a ruled document commits", async () => {
  await withStore(async (store, kv) => {
    await store.putDocument("template", "R", ruledDoc, { ruled: true });
    // Read afresh by another process of this version: both places are looked at.
    const other = new KvStore(kv);
    assert.deepEqual((await other.getDocument("template", "R"))?.bytes, ruledDoc.bytes);
    const ref = await other.findDocument("template", "R");
    assert.equal(ref?.quorum?.rules?.length, 1);
    const [result] = await other.insertIntents([{ intent: smallIntent("i-1", ref!), ref: ref! }]);
    assert.equal(result.outcome, "created");
    assert.equal(await other.findDocument("template", "missing"), null);
  });
});

Deno.test("a document under ruled_* whose rules do not check is not found, never ungoverned", async () => {
  await withStore(async (store) => {
    const broken = json({
      authorization: { signers: { [key]: 1 }, threshold: 1, rules: [{ when: "1 +", deny: "x" }] },
    });
    await store.putDocument("policy", "B", broken, { ruled: true });
    assert.equal(await store.findDocument("policy", "B"), null);
  });
});
