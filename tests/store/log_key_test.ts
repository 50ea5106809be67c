/**
 * The log's key and identity at start (docs/interface.md §14): made once
 * and kept when `LOG_SIGNING_KEY` is unset (two starts at once agree), and
 * a start with another origin or key for the same store stops, naming the
 * variable. And checkpoints: size 0 is never signed, and a tree that does
 * not extend the stored checkpoint is never signed.
 */

import assert from "node:assert/strict";
import { leafHash, treeHash } from "../../protocol/log/hash.ts";
import { generateNoteKey, parseSignerKey } from "../../protocol/log/note.ts";
import { signNote } from "../../protocol/log/note.ts";
import { formatCheckpoint } from "../../protocol/log/checkpoint.ts";
import { SettingsError } from "../../src/errors.ts";
import { readLogSettings } from "../../src/log/settings.ts";
import { prepareLogKey } from "../../src/log/identity.ts";
import { CheckpointSigner, decodeCheckpoint } from "../../src/log/checkpoints.ts";
import { encodeText, logKeys } from "../../src/log/keys.ts";
import { appendLeaves } from "../../protocol/log/tile_append.ts";
import { tileKey } from "../../src/log/tiles.ts";

async function withKv(fn: (kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}

const refusesNaming = (name: string) => (e: unknown) =>
  e instanceof SettingsError && e.message.startsWith(`${name}:`);

Deno.test("without LOG_SIGNING_KEY, the first start makes the key, and every start uses it", async () => {
  await withKv(async (kv) => {
    const settings = readLogSettings({});
    const [a, b] = await Promise.all([prepareLogKey(kv, settings), prepareLogKey(kv, settings)]);
    assert.equal(a.signer.verifierKey, b.signer.verifierKey);
    assert.equal([a.generated, b.generated].filter(Boolean).length, 1);
    const again = await prepareLogKey(kv, settings);
    assert.equal(again.generated, false);
    assert.equal(again.signer.verifierKey, a.signer.verifierKey);
    assert.match(a.signer.verifierKey, /^localhost\/intents\+/);
    await assert.rejects(
      prepareLogKey(kv, readLogSettings({ LOG_ORIGIN: "other.example/log" })),
      refusesNaming("LOG_ORIGIN"),
    );
    const { signerKey } = generateNoteKey("localhost/intents");
    await assert.rejects(
      prepareLogKey(kv, readLogSettings({ LOG_SIGNING_KEY: signerKey })),
      refusesNaming("LOG_SIGNING_KEY"),
    );
  });
});

Deno.test("with LOG_SIGNING_KEY, the store records its origin and key id", async () => {
  await withKv(async (kv) => {
    const { signerKey } = generateNoteKey("example.com/log");
    const first = await prepareLogKey(kv, readLogSettings({ LOG_SIGNING_KEY: signerKey }));
    assert.equal(first.generated, false);
    assert.equal((await kv.get(logKeys.signer)).value, null, "a given key is never stored");
    await prepareLogKey(kv, readLogSettings({ LOG_SIGNING_KEY: signerKey }));
    const other = generateNoteKey("example.com/log").signerKey;
    await assert.rejects(
      prepareLogKey(kv, readLogSettings({ LOG_SIGNING_KEY: other })),
      refusesNaming("LOG_SIGNING_KEY"),
    );
    const renamed = generateNoteKey("example.com/other").signerKey;
    await assert.rejects(
      prepareLogKey(kv, readLogSettings({ LOG_SIGNING_KEY: renamed })),
      refusesNaming("LOG_SIGNING_KEY"),
    );
  });
});

Deno.test("a checkpoint is signed only for a tree that extends the stored one; never size 0", async () => {
  await withKv(async (kv) => {
    const { signerKey } = generateNoteKey("example.com/log");
    const signer = parseSignerKey(signerKey);
    const lines: string[] = [];
    const checkpoints = new CheckpointSigner({ kv, signer, report: (l) => lines.push(l) });
    assert.equal(await checkpoints.sign({ size: 0, rootHash: new Uint8Array(32) }), "current");
    assert.equal((await kv.get(logKeys.checkpoint)).value, null);

    // A tree of 3 leaves, stored as tiles, is signed; again: nothing new.
    const leaves = [1, 2, 3].map((i) => leafHash(new Uint8Array([i])));
    const grown = appendLeaves(0, leaves, () => {
      throw new Error("no tile before");
    });
    for (const write of grown.writes) await kv.set(tileKey(write.tile), write.data);
    const tree = { size: 3, rootHash: grown.rootHash };
    assert.equal(await checkpoints.sign(tree), "signed");
    assert.equal(await checkpoints.sign(tree), "current");
    assert.deepEqual(
      decodeCheckpoint((await kv.get(logKeys.checkpoint)).value)?.rootHash,
      tree.rootHash,
    );

    // Another root for a size already signed, or a tree that does not extend it: refused.
    const forked = { size: 3, rootHash: treeHash([leaves[0], leaves[2], leaves[1]]) };
    const other = new CheckpointSigner({ kv, signer, report: (l) => lines.push(l) });
    assert.equal(await other.sign(forked), "refused");
    assert.equal(other.forked, true);
    assert.match(lines[0], /does not extend the checkpoint of size 3/);
    const stranger = new CheckpointSigner({ kv, signer, report: () => {} });
    await kv.set(
      logKeys.checkpoint,
      encodeText(
        signNote(
          formatCheckpoint({ origin: "example.com/log", size: 2, rootHash: new Uint8Array(32) }),
          [signer],
        ),
      ),
    );
    assert.equal(await stranger.sign(tree), "refused");
    // A stored checkpoint the tree does not extend stops every signer.
    assert.equal(await checkpoints.sign(forked), "refused");
  });
});
