/**
 * What the app serves of its log, verified by Go's `golang.org/x/mod/sumdb`
 * (`testing/log_go`, `tests/support/go_verifier.ts`): its checkpoint opens
 * with `note.Open` against the served key, and its root is what
 * `tlog.TreeHash` computes from the feed's entries; the served tiles are
 * what `tlog.ReadTileData` reads, the bundles hold the entries, and the
 * served proofs pass `tlog.CheckRecord`. Ignored without Go (not in CI).
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { base64 } from "@scure/base";
import { generateEd25519Key } from "../../client/mod.ts";
import { entryBytes } from "../../protocol/log/entry.ts";
import { tilePath, tilesOfTree } from "../../protocol/log/tile.ts";
import { submitIntents } from "../support/fixtures.ts";
import { buildGoVerifier, HAS_GO, runGoVerifier } from "../support/go_verifier.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";
const headers = { authorization: `Bearer ${EVENTS_TOKEN}` };
/** A full tile and bundle, and partial ones at two levels. */
const SIZE = 260;

Deno.test({
  name: "Go's note and tlog packages verify the checkpoint, tiles, bundles and proofs served",
  ignore: !HAS_GO,
  fn: async () => {
    const program = await buildGoVerifier();
    try {
      await withApp({ env: { EVENTS_TOKEN } }, async (h) => {
        const policy = (await h.client.addPolicy('{"log":"go"}')).id;
        await submitIntents(h.clientWith(), {
          policyId: policy,
          n: SIZE,
          key: generateEd25519Key(),
        });
        let checkpoint = "";
        for (let i = 0; i < 100 && !checkpoint.startsWith(`localhost/intents\n${SIZE}\n`); i++) {
          await sleep(50);
          const response = await h.fetch("/log/checkpoint", { headers });
          checkpoint = response.status === 200 ? await response.text() : "";
          if (response.bodyUsed === false) await response.body?.cancel();
        }
        assert.ok(checkpoint.startsWith(`localhost/intents\n${SIZE}\n`), checkpoint);
        const { events } = await (await h.fetch("/events?limit=1000", { headers })).json();
        const entries = events.map((e: { type: string; record: unknown }) =>
          base64.encode(entryBytes(e.type, e.record))
        );
        const fetched = async (path: string) => {
          const response = await h.fetch(`/log/${path}`, { headers });
          assert.equal(response.status, 200, path);
          if (!path.includes(".p/")) {
            assert.equal(
              response.headers.get("cache-control"),
              "private, max-age=31536000, immutable",
            );
          }
          return { path, data: base64.encode(new Uint8Array(await response.arrayBuffer())) };
        };
        const tiles = await Promise.all(tilesOfTree(SIZE).map((t) => fetched(tilePath(t))));
        const bundles = await Promise.all(
          tilesOfTree(SIZE).filter((t) => t.level === 0).map((t) =>
            fetched(tilePath({ ...t, level: "entries" }))
          ),
        );
        const proofs = await Promise.all([1, 2, 256, 257, SIZE].map(async (id) => {
          const response = await h.fetch(`/log/proof?id=${id}`, { headers });
          assert.equal(response.status, 200);
          return await response.text();
        }));
        const input = {
          verifier_key: await (await h.fetch("/log/key")).text(),
          cosigner_keys: [],
          size: SIZE,
          signed_checkpoint: checkpoint,
          inclusion: [],
          consistency: [],
          tiles,
          bundles,
          tlog_proofs: proofs,
          origin: "localhost/intents",
          entries,
        };
        const verdict = await runGoVerifier(program, input);
        assert.ok(verdict.ok, verdict.err);
        assert.equal(
          JSON.parse(verdict.out).checked,
          1 + tiles.length + bundles.length + proofs.length,
        );

        // The same checks refuse another entry in place of one served.
        const changed = [...entries];
        changed[1] = changed[0];
        const refused = await runGoVerifier(program, { ...input, entries: changed });
        assert.equal(refused.ok, false);
      });
    } finally {
      await Deno.remove(dirname(program), { recursive: true });
    }
  },
});
