/**
 * The log's modules against Go's `golang.org/x/mod/sumdb/note` and
 * `golang.org/x/mod/sumdb/tlog` (`testing/log_go`): the fixtures Go made
 * once (tests/fixtures/log/go_fixtures.json, with the command that made
 * them) are what our modules compute, always; and where Go is installed
 * (always in CI), Go verifies what our modules write now: a signed and
 * cosigned checkpoint, inclusion and consistency proofs, tiles, entry
 * bundles and tlog-proof texts.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64 } from "@scure/base";
import { formatCheckpoint, parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { verifyCheckpoint } from "../../protocol/log/checkpoint_verify.ts";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { entryBytes } from "../../protocol/log/entry.ts";
import {
  type HashReader,
  leafHash,
  memoryTree,
  proveConsistency,
  proveInclusion,
  treeHashFrom,
  verifyConsistency,
  verifyInclusion,
} from "../../protocol/log/hash.ts";
import {
  formatSignedNote,
  generateNoteKey,
  parseSignedNote,
  parseSignerKey,
  signNote,
} from "../../protocol/log/note.ts";
import { formatTlogProof } from "../../protocol/log/proof.ts";
import {
  encodeEntryBundle,
  parseTilePath,
  tileData,
  tilePath,
  tilesOfTree,
} from "../../protocol/log/tile.ts";
import { buildGoVerifier, HAS_GO, runGoVerifier } from "../support/go_verifier.ts";

interface Fixtures {
  command: string;
  origin: string;
  signer_key: string;
  verifier_key: string;
  entries: string[];
  signed_checkpoint: string;
  roots: Record<string, string>;
  inclusion: { size: number; index: number; proof: string[] }[];
  consistency: { old: number; new: number; proof: string[] }[];
  tiles: { path: string; sha256: string }[];
}

const FIXTURES: Fixtures = JSON.parse(
  await Deno.readTextFile(new URL("../fixtures/log/go_fixtures.json", import.meta.url)),
);

/** The entry of the i-th test record, as `testing/log_go` makes it. */
const entryOf = (i: number) => entryBytes("intent.accepted", { id: `${i}`, state: "accepted" });

function treeOf(size: number): { entries: Uint8Array[]; tree: HashReader } {
  const entries = Array.from({ length: size }, (_, i) => entryOf(i));
  return { entries, tree: memoryTree(entries.map(leafHash)) };
}

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

Deno.test("our modules compute what Go's note and tlog packages computed for the fixtures", () => {
  const signer = parseSignerKey(FIXTURES.signer_key);
  assert.equal(signer.verifierKey, FIXTURES.verifier_key);
  FIXTURES.entries.forEach((entry, i) => assert.equal(new TextDecoder().decode(entryOf(i)), entry));

  const { tree } = treeOf(70000);
  for (const [size, root] of Object.entries(FIXTURES.roots)) {
    assert.equal(base64.encode(treeHashFrom(Number(size), tree)), root, `root of ${size}`);
  }
  for (const { size, index, proof } of FIXTURES.inclusion) {
    assert.deepEqual(
      proveInclusion(index, size, tree).map(base64.encode),
      proof,
      `${index} in ${size}`,
    );
    const rootHash = base64.decode(FIXTURES.roots[size]);
    const claim = { index, size, leafHash: leafHash(entryOf(index)), rootHash };
    assert.ok(verifyInclusion({ ...claim, proof: proof.map(base64.decode) }));
  }
  for (const c of FIXTURES.consistency) {
    assert.deepEqual(
      proveConsistency(c.old, c.new, tree).map(base64.encode),
      c.proof,
      `${c.old} to ${c.new}`,
    );
    const claim = {
      oldSize: c.old,
      oldRoot: base64.decode(FIXTURES.roots[c.old]),
      newSize: c.new,
      newRoot: base64.decode(FIXTURES.roots[c.new]),
    };
    assert.ok(verifyConsistency({ ...claim, proof: c.proof.map(base64.decode) }));
  }
  // Go's tlog.NewTiles(8, 0, n) lists every width a partial tile passes through; the tree of
  // size n has the widest of each.
  for (const { path, sha256: digest } of FIXTURES.tiles) {
    assert.equal(hex(sha256(tileData(parseTilePath(path), tree))), digest, path);
  }
  const widest = new Map(FIXTURES.tiles.map(({ path }) => [path.replace(/\.p\/\d+$/, ""), path]));
  assert.deepEqual(tilesOfTree(70000).map(tilePath), [...widest.values()]);

  // Ed25519 is deterministic: signing Go's checkpoint text with Go's key gives Go's bytes.
  const { text } = parseSignedNote(FIXTURES.signed_checkpoint);
  assert.equal(signNote(text, [signer]), FIXTURES.signed_checkpoint);
  const verdict = verifyCheckpoint(FIXTURES.signed_checkpoint, { logKey: FIXTURES.verifier_key });
  assert.ok(verdict.ok);
  assert.deepEqual(verdict.checkpoint, parseCheckpoint(text));
  assert.equal(
    formatCheckpoint({ origin: FIXTURES.origin, size: 70000, rootHash: treeHashFrom(70000, tree) }),
    text,
  );
});

Deno.test({
  name:
    "Go's note.Open, tlog.CheckRecord, tlog.CheckTree and tlog.ReadTileData accept what our modules write",
  ignore: !HAS_GO,
  async fn() {
    const program = await buildGoVerifier();
    try {
      const size = 1000;
      const { entries, tree } = treeOf(size);
      const log = generateNoteKey("example.com/log");
      const witnesses = [generateCosignerKey("w1.example"), generateCosignerKey("w2.example")];
      const checkpointOf = (n: number) => {
        const text = formatCheckpoint({
          origin: "example.com/log",
          size: n,
          rootHash: treeHashFrom(n, tree),
        });
        const signed = parseSignedNote(signNote(text, [parseSignerKey(log.signerKey)]));
        const cosigned = witnesses.map((w) =>
          parseCosignerSignerKey(w.signerKey).cosign(text, 1_700_000_000 + n)
        );
        return formatSignedNote({ text, signatures: [...signed.signatures, ...cosigned] });
      };
      const sizes = [1, 2, 3, 255, 256, 257, 511, 512, 513, 999, 1000];
      const inclusion = sizes.flatMap((n) =>
        [0, Math.floor(n / 3), n - 1].map((index) => ({
          size: n,
          index,
          proof: proveInclusion(index, n, tree).map(base64.encode),
        }))
      );
      const consistency = sizes.flatMap((n) =>
        sizes.filter((m) => m <= n).map((m) => ({
          old: m,
          new: n,
          proof: proveConsistency(m, n, tree).map(base64.encode),
        }))
      );
      const tiles = [...tilesOfTree(size), { level: 0, index: 3, width: 100 }, {
        level: 1,
        index: 0,
        width: 2,
      }]
        .map((tile) => ({ path: tilePath(tile), data: base64.encode(tileData(tile, tree)) }));
      const bundles = [{ index: 0, width: 256 }, { index: 3, width: 232 }, { index: 3, width: 5 }]
        .map((
          { index, width },
        ) => ({
          path: tilePath({ level: "entries", index, width }),
          data: base64.encode(encodeEntryBundle(entries.slice(index * 256, index * 256 + width))),
        }));
      const tlogProofs = [[0, 1], [5, 257], [999, 1000]].map(([index, n]) =>
        formatTlogProof({
          index,
          proof: proveInclusion(index, n, tree),
          checkpoint: checkpointOf(n),
        })
      );
      const input = {
        verifier_key: log.verifierKey,
        cosigner_keys: witnesses.map((w) => w.verifierKey),
        size,
        signed_checkpoint: checkpointOf(size),
        inclusion,
        consistency,
        tiles,
        bundles,
        tlog_proofs: tlogProofs,
      };
      const verdict = await runGoVerifier(program, input);
      assert.ok(verdict.ok, verdict.err);
      const { checked } = JSON.parse(verdict.out);
      const counts = [inclusion, consistency, tiles, bundles].map((list) => list.length);
      assert.equal(checked, 1 + counts.reduce((a, b) => a + b) + tlogProofs.length);

      // The same checks refuse a changed cosignature, proof, tile, bundle or tlog proof.
      const other = base64.encode(new Uint8Array(32));
      const refused = await runGoVerifier(program, {
        ...input,
        signed_checkpoint: input.signed_checkpoint.replace(
          /(— w1\.example \S{20})(\S)/,
          (_, head, c) => head + (c === "A" ? "B" : "A"),
        ),
        inclusion: [{ ...inclusion[4], proof: [other, ...inclusion[4].proof.slice(1)] }],
        consistency: [{ ...consistency[5], proof: [...consistency[5].proof.slice(0, -1), other] }],
        tiles: [{ ...tiles[0], data: base64.encode(new Uint8Array(8192)) }],
        bundles: [{ ...bundles[2], data: bundles[1].data }],
        tlog_proofs: [tlogProofs[1].replace("index 5", "index 6")],
      });
      assert.equal(refused.ok, false);
      const named = [
        "note.Open with the cosigners",
        "inclusion of",
        "consistency of",
        "tile/0/000",
        "tile/entries/003.p/5",
        "tlog proof 0",
      ];
      for (const what of named) assert.ok(refused.err.includes(what), `${what} in ${refused.err}`);
    } finally {
      await Deno.remove(dirname(program), { recursive: true });
    }
  },
});
