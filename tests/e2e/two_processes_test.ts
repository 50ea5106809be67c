/**
 * Two server processes on one KV file: the same configuration and ETags,
 * one acceptance per id across both, each other's intents and documents.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, IntentsClient, signVariantB } from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  getConfig,
  newIntent,
  putConfig,
} from "../support/fixtures.ts";
import { type ProcessHarness, startProcess } from "../support/process.ts";
import { tempKvPath } from "../support/server.ts";

Deno.test("two server processes on one KV file", async (t) => {
  const kvPath = await tempKvPath();
  const servers: ProcessHarness[] = [];
  try {
    for (let i = 0; i < 2; i++) servers.push(await startProcess({ store: kvPath }));
    const [a, b] = servers;

    await t.step("see the same configuration and ETag", async () => {
      const set = await putConfig(a, '{"evidence_extractor_url":"https://shared.example"}');
      assert.equal(set.status, 200);
      const body = await set.json();
      const res = await getConfig(b);
      assert.deepEqual(await res.json(), body);
      assert.equal(res.headers.get("etag"), set.headers.get("etag"));
    });

    await t.step("honour each other's ETags", async () => {
      const etag = (await getConfig(a)).headers.get("etag")!;
      const viaB = await putConfig(b, '{"evidence_extractor_url":"https://b.example"}', {
        "if-match": etag,
      });
      assert.equal(viaB.status, 200);
      await viaB.body?.cancel();
      const lateA = await putConfig(a, '{"evidence_extractor_url":"https://a.example"}', {
        "if-match": etag,
      });
      await expectError(lateA, 412, "precondition_failed");
    });

    await t.step("accept one id exactly once across both processes", async () => {
      const policy = await a.newPolicy();
      const keys = Array.from({ length: 8 }, () => generateEd25519Key());
      for (let round = 0; round < 5; round++) {
        const intent = newIntent(policy);
        const results = await Promise.all(
          keys.map((key, i) => (i % 2 === 0 ? a : b).submit(signVariantB(intent, key))),
        );
        const statuses = results.map((r) => r.status).sort();
        await Promise.all(results.map((r) => r.body?.cancel()));
        assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
      }
    });

    await t.step("see each other's intents and documents", async () => {
      const policy = await a.newPolicy();
      const body = signVariantB(newIntent(policy), generateEd25519Key());
      const record = await expectCreated(await b.submit(body));
      const seen = await new IntentsClient({ url: a.url, token: a.server.adminToken })
        .getIntent(record.id as string);
      assert.deepEqual(seen, record);
      // The other process replays the same body, and refuses another for the id.
      const replayed = await a.submit(body);
      assert.equal(replayed.status, 200);
      assert.deepEqual(await replayed.json(), record);
      const taken = signVariantB(body.intent, generateEd25519Key());
      await expectError(await a.submit(taken), 409, "intent_exists");
    });
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});
