/**
 * One store, two Deno versions (docs/interface.md §1, §8): what the service wrote
 * under this Deno is read and written by the server running on Deno 2.5
 * (what Deno Deploy runs), and what that one wrote is read back here. A
 * V8-serialized value written by a newer Deno cannot be read by an older one;
 * the store keeps none.
 */

import assert from "node:assert/strict";
import { ed25519Signature, type Intent, type Payload } from "../../client/mod.ts";
import { auditIntents } from "../support/audit.ts";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import { newPayload } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { harnessFor } from "../support/process.ts";
import {
  addGoverned,
  approve,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
  postDocument,
  readFeed,
} from "../support/governed.ts";
import { startServer, tempKvPath } from "../support/server.ts";
import type { Json } from "../support/record.ts";

/** Runs `fn` against a server on `kvPath` run by the Deno binary `deno`, then stops it. */
async function withServerOn(
  kvPath: string,
  deno: string | undefined,
  fn: (h: Harness) => Promise<void>,
): Promise<void> {
  const server = await startServer({
    kvPath,
    deno,
    env: { PASSKEY_ORIGINS: "http://localhost:8000", VERIFY_WORKERS: "0" },
  });
  try {
    await fn(harnessFor(server));
  } finally {
    await server.stop();
  }
}

/** Every record, the feed, the configuration and a document, as the API answers them. */
async function snapshot(h: Harness, ids: string[], template: string): Promise<Json> {
  const records = [];
  for (const id of ids) {
    const response = await h.fetch(`/intents/${id}`, { headers: { authorization: h.auth } });
    assert.equal(response.status, 200, await response.clone().text());
    records.push(await response.json());
  }
  const config = await (await h.fetch("/config", { headers: { authorization: h.auth } })).json();
  const document = await (await h.fetch(`/templates/${template}`)).text();
  return { records, feed: await readFeed(h.url, h.adminToken, null), config, document };
}

Deno.test(`a store written on this Deno is read and written on Deno ${DEPLOY_DENO}, and back`, async () => {
  const older = await denoBinary(DEPLOY_DENO);
  const kvPath = await tempKvPath();
  const [e1, e2] = [ed25519Signer(), ed25519Signer()];
  const ids: string[] = [];
  let template = "";
  let pending: Payload | Intent = { id: "", policy_id: "" };
  let policy = "";
  let before: Json = {};

  await withServerOn(kvPath, undefined, async (h) => {
    template = await h.newTemplate();
    const plain = await postDocument(h, "template", "plain text rules", "text/plain");
    assert.equal(plain.status, 201);
    policy = await addGoverned(h, "policy", authorizationOf([e1, e2], 2));
    for (let i = 0; i < 5; i++) {
      const payload = newPayload(template, { attrs: { fields: { n: i, big: 1e20 } } });
      const response = await h.submit({ payload, signature: ed25519Signature(payload, e1.pair) });
      assert.equal(response.status, 201);
      ids.push(payload.id);
    }
    pending = newSigned("policy", policy);
    const response = await h.submit(bodyOf(pending, await e1.sign(pending)));
    assert.equal(response.status, 202);
    ids.push(pending.id);
    const config = await h.fetch("/config", {
      method: "PUT",
      headers: { authorization: h.auth, "content-type": "application/json" },
      body: JSON.stringify({ evidence_extractor_url: "https://extractor.example/" }),
    });
    assert.equal(config.status, 200);
    before = await snapshot(h, ids, template);
  });

  await withServerOn(kvPath, older, async (h) => {
    assert.deepEqual(await snapshot(h, ids, template), before);
    // Written on the older Deno: an approval that accepts, and new intents.
    const view = await approve(h, pending.id, pending, e2);
    assert.equal(view.state, "accepted");
    for (let i = 0; i < 3; i++) {
      const payload = newPayload(template);
      const response = await h.submit({ payload, signature: ed25519Signature(payload, e1.pair) });
      assert.equal(response.status, 201, await response.clone().text());
      ids.push(payload.id);
    }
    before = await snapshot(h, ids, template);
  });

  await withServerOn(kvPath, undefined, async (h) => {
    const after = await snapshot(h, ids, template);
    assert.deepEqual(after, before);
    const types = (after.feed as { type: string }[]).map((e) => e.type);
    assert.deepEqual(types, [
      ...Array(5).fill("intent.accepted"),
      "intent.pending",
      "intent.accepted",
      ...Array(3).fill("intent.accepted"),
    ]);
  });

  const kv = await Deno.openKv(kvPath);
  try {
    // Bytes and KvU64 only, and the feed whole.
    assert.equal((await auditIntents(kv)).length, ids.length);
  } finally {
    kv.close();
  }
});
