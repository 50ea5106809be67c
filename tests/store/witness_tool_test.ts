/**
 * Our witness's `add-checkpoint` (tools/witness/, C2SP tlog-witness) on a
 * real in-memory KV: each refusal with the status the specification names,
 * the cosignature that verifies, the 409 that names the size, and the one
 * check-and-store that lets only one of two racing requests through.
 */

import assert from "node:assert/strict";
import { formatCheckpoint } from "../../protocol/log/checkpoint.ts";
import { verifyCheckpoint } from "../../protocol/log/checkpoint_verify.ts";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { leafHash, memoryTree, proveConsistency, treeHash } from "../../protocol/log/hash.ts";
import {
  generateNoteKey,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from "../../protocol/log/note.ts";
import { addCheckpointBody } from "../../src/log/witness_call.ts";
import { addCheckpoint, MAX_REQUEST_BYTES } from "../../tools/witness/add_checkpoint.ts";

const ORIGIN = "tool.test/log";
const log = generateNoteKey(ORIGIN);
const other = generateNoteKey(ORIGIN);
const witness = generateCosignerKey("tool.test/witness");
const leaves = Array.from({ length: 9 }, (_, i) => leafHash(new TextEncoder().encode(`e${i}`)));
const forked = leaves.map((l, i) => i === 1 ? leafHash(new TextEncoder().encode("x")) : l);

/** The checkpoint of the first `size` leaves of `of`, signed by `key`. */
function checkpoint(size: number, of = leaves, key = log.signerKey): string {
  const rootHash = treeHash(of.slice(0, size));
  return signNote(formatCheckpoint({ origin: ORIGIN, size, rootHash }), [parseSignerKey(key)]);
}

function request(body: Uint8Array<ArrayBuffer> | string): Request {
  return new Request("http://witness.test/add-checkpoint", { method: "POST", body });
}

/** Sends `old`, the proof from `old` to `size`, and the checkpoint of `size`. */
function add(kv: Deno.Kv, old: number, size: number, of = leaves, key = log.signerKey) {
  const proof = old === 0 || old === size ? [] : proveConsistency(old, size, memoryTree(of));
  const config = {
    cosigner: parseCosignerSignerKey(witness.signerKey),
    logs: new Map([[ORIGIN, parseVerifierKey(log.verifierKey)]]),
  };
  return addCheckpoint(
    kv,
    config,
    request(addCheckpointBody(old, proof, checkpoint(size, of, key))),
  );
}

Deno.test("our witness cosigns what extends its state and refuses the rest, as tlog-witness says", async () => {
  const kv = await Deno.openKv(":memory:");
  const config = {
    cosigner: parseCosignerSignerKey(witness.signerKey),
    logs: new Map([[ORIGIN, parseVerifierKey(log.verifierKey)]]),
  };
  try {
    assert.equal((await addCheckpoint(kv, config, request("old x\n\n"))).status, 400);
    // A body past 64 KiB, declared or streamed, is read no further than the limit.
    const large = new Uint8Array(MAX_REQUEST_BYTES + 1).fill(0x61);
    assert.equal((await addCheckpoint(kv, config, request(large))).status, 413);
    const streamed = new Request("http://witness.test/add-checkpoint", {
      method: "POST",
      body: ReadableStream.from([large.subarray(0, 40_000), large.subarray(40_000)]),
    });
    assert.equal((await addCheckpoint(kv, config, streamed)).status, 413);
    assert.equal((await addCheckpoint(kv, config, request("no empty line"))).status, 400);
    const stranger = generateNoteKey("stranger.test/log");
    const unknown = signNote(
      formatCheckpoint({ origin: "stranger.test/log", size: 1, rootHash: leaves[0] }),
      [parseSignerKey(stranger.signerKey)],
    );
    assert.equal((await addCheckpoint(kv, config, request(`old 0\n\n${unknown}`))).status, 404);
    assert.equal((await add(kv, 0, 3, leaves, other.signerKey)).status, 403);
    assert.equal(
      (await addCheckpoint(kv, config, request(`old 4\n\n${checkpoint(3)}`))).status,
      400,
    );

    const first = await add(kv, 0, 3);
    assert.equal(first.status, 200);
    const cosigned = checkpoint(3) + await first.text();
    assert.ok(
      verifyCheckpoint(cosigned, {
        logKey: log.verifierKey,
        witnesses: [witness.verifierKey],
        quorum: 1,
      }).ok,
    );

    const conflict = await add(kv, 0, 5);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.headers.get("content-type"), "text/x.tlog.size");
    assert.equal(await conflict.text(), "3\n");

    // A proof from 3 of another tree does not verify: 422, and the state stays.
    assert.equal((await add(kv, 3, 5, forked)).status, 422);
    assert.equal((await add(kv, 3, 5)).status, 200);
    assert.equal((await add(kv, 5, 5)).status, 200);
    assert.equal((await add(kv, 5, 5, forked)).status, 422);

    // Two requests from 5 at once: one check-and-store lets one through, the other learns 6 or 7.
    const [a, b] = await Promise.all([add(kv, 5, 6), add(kv, 5, 7)]);
    assert.deepEqual([a.status, b.status].sort(), [200, 409]);
    await (a.status === 409 ? a : b).body?.cancel();
  } finally {
    kv.close();
  }
});
