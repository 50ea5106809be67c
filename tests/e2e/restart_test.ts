/**
 * What survives a restart of the server process on the same KV file: the
 * intents (even after a hard kill) and the runtime configuration with its
 * ETag; the configuration's default is read from the environment of each
 * boot.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import {
  expectCreated,
  expectError,
  getConfig,
  listPages,
  newPayload,
  putConfig,
} from "../support/fixtures.ts";
import { type ProcessHarness, startProcess } from "../support/process.ts";
import { tempKvPath } from "../support/server.ts";

Deno.test("intents survive a restart, even after a hard kill", async () => {
  const kvPath = await tempKvPath();
  const env = { ADMIN_TOKEN: "admin-token-for-the-restart-tests-0123" };
  let h: ProcessHarness = await startProcess({ store: kvPath, env });
  try {
    const template = await h.newTemplate();
    const key = generateEd25519Key();
    for (let i = 0; i < 25; i++) {
      const body = signVariantA(
        newPayload(template, { id: `page-${String(i).padStart(2, "0")}` }),
        key,
      );
      await expectCreated(await h.submit(body));
    }
    const before = (await listPages(h, 100)).flat();
    assert.equal(before.length, 25);
    await h.server.stop({ kill: true });
    h = await startProcess({ store: kvPath, env });
    const after = (await listPages(h, 100)).flat();
    assert.deepEqual(after, before);
    // The restarted server knows the id: the same body is its record, another body is 409.
    const again = signVariantA(newPayload(template, { id: "page-00" }), key);
    const replayed = await h.submit(again);
    assert.equal(replayed.status, 200);
    assert.deepEqual(await replayed.json(), before.find((r) => r.id === "page-00"));
    const taken = signVariantA(newPayload(template, { id: "page-00" }), generateEd25519Key());
    await expectError(await h.submit(taken), 409, "intent_exists");

    await h.close();
    h = await startProcess({ store: kvPath, env });
    assert.deepEqual((await listPages(h, 100)).flat(), before);
  } finally {
    await h.close();
  }
});

Deno.test("the configuration survives a restart, its default read at each boot", async (t) => {
  const kvPath = await tempKvPath();
  const env = { EVIDENCE_EXTRACTOR_URL: "https://extractor.example:9443/base" };
  let h: ProcessHarness = await startProcess({ store: kvPath, env });
  try {
    await t.step("the configuration survives a restart on the same KV file", async () => {
      const set = await putConfig(h, '{"evidence_extractor_url":"https://durable.example/x"}');
      const before = await set.json();
      const etag = set.headers.get("etag");
      await h.close();
      h = await startProcess({ store: kvPath, env });
      const res = await getConfig(h);
      assert.deepEqual(await res.json(), before);
      assert.equal(res.headers.get("etag"), etag);
    });

    await t.step("the default is read from the environment of each boot", async () => {
      await putConfig(h, '{"evidence_extractor_url":""}');
      await h.close();
      h = await startProcess({
        store: kvPath,
        env: { EVIDENCE_EXTRACTOR_URL: "http://other:1" },
      });
      const got = await (await getConfig(h)).json();
      assert.equal(got.evidence_extractor_url, "");
      assert.equal(got.effective_url, "http://other:1");
    });
  } finally {
    await h.close();
  }
});
