/**
 * The log's routes (docs/interface.md §14) on the whole app: the checkpoint,
 * tiles and bundles, proofs by leaf and by id, the key; who may read each,
 * their content types and cache headers, and their 400 and 404 forms.
 */

import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import { generateEd25519Key } from "../../client/mod.ts";
import { entryBytes } from "../../protocol/log/entry.ts";
import { leafHash, treeHash } from "../../protocol/log/hash.ts";
import { openNote, parseVerifierKey } from "../../protocol/log/note.ts";
import { parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { verifyTlogProof } from "../../protocol/log/proof.ts";
import { decodeEntryBundle } from "../../protocol/log/tile.ts";
import { submitIntents } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const key = generateEd25519Key();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The entries of the feed's events, from `GET /events` as a consumer reads them. */
async function feedEntries(h: Harness): Promise<Uint8Array[]> {
  const response = await h.fetch("/events?limit=1000", { headers: bearer(EVENTS_TOKEN) });
  const { events } = await response.json();
  return events.map((e: { type: string; record: unknown }) => entryBytes(e.type, e.record));
}

/** Waits until the served checkpoint has `size` entries; its text. */
async function checkpointOf(
  h: Harness,
  size: number,
  headers: Record<string, string> = bearer(EVENTS_TOKEN),
) {
  for (let i = 0; i < 100; i++) {
    const response = await h.fetch("/log/checkpoint", { headers });
    if (response.status === 200) {
      const text = await response.text();
      const opened = openNote(text, [parseVerifierKey(await (await h.fetch("/log/key")).text())]);
      assert.ok(opened.ok);
      if (parseCheckpoint(opened.text).size === size) return { response, text };
    } else await response.body?.cancel();
    await sleep(50);
  }
  throw new Error(`no checkpoint of size ${size}`);
}

async function refused(h: Harness, path: string, status: number, code: string, token?: string) {
  const response = await h.fetch(path, { headers: token ? bearer(token) : {} });
  assert.equal(response.status, status, path);
  assert.equal((await response.json()).code, code, path);
}

Deno.test("the log's routes: answers, access, headers and refusals", async (t) => {
  await withApp({ env: { EVENTS_TOKEN } }, async (h) => {
    await t.step("an empty log: 404 for the checkpoint; the key is served to anyone", async () => {
      await refused(h, "/log/checkpoint", 404, "not_found", EVENTS_TOKEN);
      const response = await h.fetch("/log/key");
      assert.equal(response.status, 200);
      assert.equal(response.headers.get("content-type"), "text/plain; charset=utf-8");
      const vkey = await response.text();
      assert.match(vkey, /^localhost\/intents\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
      parseVerifierKey(vkey);
    });

    const policy = (await h.client.addPolicy('{"log":"routes"}')).id;
    await submitIntents(h.clientWith(), { policyId: policy, n: 3, key });

    await t.step(
      "the checkpoint: signed, its tree the feed's, private without LOG_PUBLIC",
      async () => {
        const { response, text } = await checkpointOf(h, 3);
        assert.equal(response.headers.get("content-type"), "text/plain; charset=utf-8");
        assert.equal(response.headers.get("cache-control"), "private, max-age=1");
        const { rootHash } = parseCheckpoint(text.slice(0, text.indexOf("\n\n") + 1));
        assert.deepEqual(rootHash, treeHash((await feedEntries(h)).map(leafHash)));
        await refused(h, "/log/checkpoint", 401, "unauthorized");
        assert.equal(
          (await h.fetch("/log/checkpoint", { headers: bearer(h.adminToken) })).status,
          200,
        );
      },
    );

    await t.step("tiles and bundles at every width the tree holds, with a token", async () => {
      const entries = await feedEntries(h);
      const leaves = entries.map(leafHash);
      const tile = await h.fetch("/log/tile/0/000.p/3", { headers: bearer(EVENTS_TOKEN) });
      assert.equal(tile.status, 200);
      assert.equal(tile.headers.get("content-type"), "application/octet-stream");
      assert.equal(tile.headers.get("vary"), "Authorization");
      assert.deepEqual(
        new Uint8Array(await tile.arrayBuffer()),
        new Uint8Array(
          leaves.flatMap((l) => [...l]),
        ),
      );
      const two = await h.fetch("/log/tile/0/000.p/2", { headers: bearer(EVENTS_TOKEN) });
      assert.equal((await two.arrayBuffer()).byteLength, 64);
      const bundle = await h.fetch("/log/tile/entries/000.p/3", { headers: bearer(EVENTS_TOKEN) });
      assert.deepEqual(decodeEntryBundle(new Uint8Array(await bundle.arrayBuffer()), 3), entries);
      const narrower = await h.fetch("/log/tile/entries/000.p/2", {
        headers: bearer(EVENTS_TOKEN),
      });
      assert.deepEqual(
        decodeEntryBundle(new Uint8Array(await narrower.arrayBuffer()), 2),
        entries.slice(0, 2),
      );
      for (
        const path of [
          "/log/tile/0/000.p/4",
          "/log/tile/0/000",
          "/log/tile/1/000.p/1",
          "/log/tile/entries/000.p/4",
          "/log/tile/entries/000",
          "/log/tile/entries/001.p/1",
        ]
      ) {
        await refused(h, path, 404, "not_found", EVENTS_TOKEN);
      }
      for (
        const path of [
          "/log/tile/0/0.p/3",
          "/log/tile/00/000.p/3",
          "/log/tile/0/000.p/256",
          "/log/tile/0/000.p/03",
          "/log/tile/0/x000/000.p/3",
          "/log/tile/64/000",
          "/log/tile/0/000/",
          "/log/tile/entries/%30%30%30.p/3",
        ]
      ) {
        await refused(h, path, 400, "invalid_body", EVENTS_TOKEN);
      }
      await refused(h, "/log/tile/0/000.p/3", 401, "unauthorized");
    });

    await t.step("proofs: by leaf hash to anyone, by event id with a token", async () => {
      const entries = await feedEntries(h);
      const logKey = await (await h.fetch("/log/key")).text();
      const leaf = base64urlnopad.encode(leafHash(entries[1]));
      const byLeaf = await h.fetch(`/log/proof?leaf=${leaf}`);
      assert.equal(byLeaf.status, 200);
      assert.equal(byLeaf.headers.get("content-type"), "text/plain; charset=utf-8");
      const proof = await byLeaf.text();
      assert.ok(verifyTlogProof({ proof, entry: entries[1], logKey }).ok);
      const byId = await h.fetch("/log/proof?id=2", { headers: bearer(EVENTS_TOKEN) });
      assert.equal(await byId.text(), proof);
      await refused(h, "/log/proof?id=2", 401, "unauthorized");
      await refused(
        h,
        `/log/proof?leaf=${base64urlnopad.encode(new Uint8Array(32))}`,
        404,
        "not_found",
      );
      await refused(h, "/log/proof?id=99", 404, "not_found", EVENTS_TOKEN);
      for (
        const query of [
          "",
          `leaf=${leaf}&id=2`,
          "leaf=abc",
          `leaf=${leaf}=`,
          "id=0",
          "id=02",
          "id=x",
          `leaf=${leaf}&leaf=${leaf}`,
          "index=1",
        ]
      ) {
        await refused(h, `/log/proof?${query}`, 400, "invalid_body", EVENTS_TOKEN);
      }
    });

    await t.step("HEAD answers as GET without a body", async () => {
      const response = await h.fetch("/log/key", { method: "HEAD" });
      assert.equal(response.status, 200);
      assert.equal(await response.text(), "");
    });
  });
});

Deno.test("LOG_PUBLIC=true: the checkpoint needs no token and is cached publicly", async () => {
  await withApp({ env: { EVENTS_TOKEN, LOG_PUBLIC: "true" } }, async (h) => {
    const policy = (await h.client.addPolicy('{"log":"public"}')).id;
    await submitIntents(h.clientWith(), { policyId: policy, n: 1, key });
    const { response } = await checkpointOf(h, 1, {});
    assert.equal(response.headers.get("cache-control"), "public, max-age=1");
    await refused(h, "/log/checkpoint", 401, "unauthorized", "wrong-token-0123456789");
    await refused(h, "/log/tile/0/000.p/1", 401, "unauthorized");
  });
});

Deno.test("a request to /log without a token spends one token of its address; with one, none", async () => {
  await withApp(
    { env: { EVENTS_TOKEN, LOG_PUBLIC: "true", RATE_LIMIT_PER_ADDRESS: "1" }, limitClock: () => 0 },
    async (h) => {
      const leaf = base64urlnopad.encode(new Uint8Array(32));
      for (const path of ["/log/key", "/log/checkpoint", `/log/proof?leaf=${leaf}`]) {
        const address = `192.0.2.${path.length}`;
        for (let n = 1; n <= 3; n++) {
          const bare = await h.fetchFrom(address, path);
          await bare.body?.cancel();
          assert.ok(bare.headers.has("ratelimit-policy"), path);
          assert.equal(bare.status === 429, n === 3, `${path} #${n}: ${bare.status}`);
        }
        if (path === "/log/key") continue;
        const withToken = await h.fetchFrom(address, path, { headers: bearer(EVENTS_TOKEN) });
        await withToken.body?.cancel();
        assert.notEqual(withToken.status, 429, path);
        assert.ok(!withToken.headers.has("ratelimit-policy"), path);
      }
    },
  );
});
