/**
 * The entries that commit to events (docs/interface.md §14), and
 * `c2sp.org/tlog-proof@v1` proofs: written, read back, and checked against
 * an entry, the log's key and a witness policy, each failure named.
 */

import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64, base64urlnopad } from "@scure/base";
import canonicalize from "canonicalize";
import { formatCheckpoint } from "../../protocol/log/checkpoint.ts";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { entryBytes, entryLeafHash, recordSha256 } from "../../protocol/log/entry.ts";
import { leafHash, memoryTree, proveInclusion, treeHash } from "../../protocol/log/hash.ts";
import {
  formatSignedNote,
  generateNoteKey,
  parseSignedNote,
  parseSignerKey,
  signNote,
} from "../../protocol/log/note.ts";
import { formatTlogProof, parseTlogProof, verifyTlogProof } from "../../protocol/log/proof.ts";

const encoder = new TextEncoder();

Deno.test("an entry is JCS of record_sha256 and type, R being base64url of SHA-256 of JCS of the record", () => {
  const record = {
    state: "accepted",
    id: "0190a1b2",
    amount: 1e21,
    note: "€",
    nested: { b: 1, a: [true, null] },
  };
  const r = base64urlnopad.encode(sha256(encoder.encode(canonicalize(record)!)));
  assert.equal(recordSha256(record), r);
  const entry = new TextDecoder().decode(entryBytes("intent.accepted", record));
  assert.equal(entry, `{"record_sha256":"${r}","type":"intent.accepted"}`);
  assert.equal(entry, canonicalize({ type: "intent.accepted", record_sha256: r }));
  assert.deepEqual(entryLeafHash("intent.accepted", record), leafHash(encoder.encode(entry)));
  assert.ok(entry.length < 120);
  assert.throws(() => entryBytes("", record), TypeError);
  assert.throws(() => entryBytes("intent.accepted", { a: undefined }), TypeError);
  assert.throws(() => recordSha256({ a: NaN }), TypeError);
});

/** A log of `size` entries, its signed checkpoint, and a proof for `index`. */
function logOf(size: number, index: number, cosigners: string[] = []) {
  const log = generateNoteKey("example.com/log");
  const entries = Array.from(
    { length: size },
    (_, i) => entryBytes("intent.accepted", { id: `${i}` }),
  );
  const leaves = entries.map(leafHash);
  const text = formatCheckpoint({ origin: "example.com/log", size, rootHash: treeHash(leaves) });
  const signed = parseSignedNote(signNote(text, [parseSignerKey(log.signerKey)]));
  const cosignatures = cosigners.map((key) =>
    parseCosignerSignerKey(key).cosign(text, 1_700_000_000)
  );
  const checkpoint = formatSignedNote({
    text,
    signatures: [...signed.signatures, ...cosignatures],
  });
  const proof = formatTlogProof({
    index,
    proof: proveInclusion(index, size, memoryTree(leaves)),
    checkpoint,
  });
  return { log, entries, checkpoint, proof };
}

Deno.test("a proof is the header, the index, the hashes, an empty line and the checkpoint", () => {
  const { entries, checkpoint, proof } = logOf(5, 2);
  const lines = proof.split("\n");
  assert.equal(lines[0], "c2sp.org/tlog-proof@v1");
  assert.equal(lines[1], "index 2");
  assert.equal(lines.slice(2, 5).every((l) => base64.decode(l).length === 32), true);
  assert.equal(lines[5], "");
  assert.ok(proof.endsWith(`\n\n${checkpoint}`));
  assert.ok(!proof.includes("extra"));
  const parsed = parseTlogProof(proof);
  assert.equal(parsed.index, 2);
  assert.equal(parsed.proof.length, 3);
  assert.equal(parsed.checkpoint, checkpoint);
  assert.equal(formatTlogProof(parsed), proof);
  assert.deepEqual(parseTlogProof(encoder.encode(proof)), parsed);
  // A reader takes the extra line the specification allows.
  const withExtra = proof.replace("\nindex", "\nextra AQID\nindex");
  assert.deepEqual(parseTlogProof(withExtra).extra, new Uint8Array([1, 2, 3]));
  // A tree of one entry: no hashes.
  const single = logOf(1, 0);
  assert.equal(parseTlogProof(single.proof).proof.length, 0);
  assert.ok(
    verifyTlogProof({
      proof: single.proof,
      entry: single.entries[0],
      logKey: single.log.verifierKey,
    }).ok,
  );
  assert.ok(entries.length === 5);
});

Deno.test("malformed proofs are refused", () => {
  const { proof } = logOf(5, 2);
  const refused = [
    proof.replace("c2sp.org/tlog-proof@v1", "c2sp.org/tlog-proof@v2"),
    proof.replace("index 2", "index 02"),
    proof.replace("index 2", "index -2"),
    proof.replace("index 2", "Index 2"),
    proof.replace("index 2\n", ""),
    proof.replace("\nindex", "\nextra !!\nindex"),
    proof.replace(/\n\n[\s\S]*$/, "\n\n"), // no checkpoint
    proof.replace(/\n\n[\s\S]*$/, "\n"),
    proof.replace(/index 2\n[^\n]+/, "index 2\nAAAA"), // a hash of 3 bytes
    proof.replace(/index 2\n[^\n]+/, "index 2\n" + base64.encode(new Uint8Array(32)).slice(0, -1)),
    "c2sp.org/tlog-proof@v1",
    "",
  ];
  for (const text of refused) {
    assert.throws(() => parseTlogProof(text), SyntaxError, JSON.stringify(text));
  }
  assert.throws(() => parseTlogProof(new Uint8Array([0xc3])), SyntaxError);
  assert.throws(
    () => formatTlogProof({ index: -1, proof: [], checkpoint: "a\n\n— b c\n" }),
    RangeError,
  );
  assert.throws(
    () => formatTlogProof({ index: 0, proof: [new Uint8Array(3)], checkpoint: "a\n\n— b c\n" }),
    TypeError,
  );
});

Deno.test("a proof verifies for its entry against the log's key and a witness quorum", () => {
  const witnesses = [generateCosignerKey("w1.example"), generateCosignerKey("w2.example")];
  const { log, entries, proof } = logOf(300, 257, [witnesses[0].signerKey]);
  const policy = { logKey: log.verifierKey, witnesses: witnesses.map((w) => w.verifierKey) };
  const verdict = verifyTlogProof({ proof, entry: entries[257], ...policy, quorum: 1 });
  assert.ok(verdict.ok);
  assert.equal(verdict.index, 257);
  assert.equal(verdict.checkpoint.size, 300);
  assert.deepEqual(verdict.cosigned.map((c) => c.name), ["w1.example"]);
  const cases: [Parameters<typeof verifyTlogProof>[0], string][] = [
    [{ proof, entry: entries[256], ...policy }, "not_included"],
    [
      { proof: proof.replace("index 257", "index 256"), entry: entries[256], ...policy },
      "not_included",
    ],
    [
      { proof: proof.replace("index 257", "index 300"), entry: entries[257], ...policy },
      "index_out_of_range",
    ],
    [{ proof, entry: entries[257], ...policy, quorum: 2 }, "quorum_not_met"],
    [
      { proof, entry: entries[257], logKey: generateNoteKey("example.com/log").verifierKey },
      "no_log_signature",
    ],
    [{ proof, entry: entries[257], ...policy, origin: "example.com/other" }, "origin_mismatch"],
    [
      { proof: proof.replace("\n300\n", "\n301\n"), entry: entries[257], ...policy },
      "log_signature_invalid",
    ],
    [{ proof: proof.replace("index", "idx"), entry: entries[257], ...policy }, "malformed_proof"],
  ];
  for (const [claim, error] of cases) {
    const refused = verifyTlogProof(claim);
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.error, error);
    assert.ok(!refused.ok && refused.message.length > 0);
  }
  const lines = proof.split("\n");
  lines[3] = base64.encode(new Uint8Array(32));
  const tampered = verifyTlogProof({ proof: lines.join("\n"), entry: entries[257], ...policy });
  assert.equal(!tampered.ok && tampered.error, "not_included");
});
