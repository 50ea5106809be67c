/**
 * Checkpoints (C2SP tlog-checkpoint), Ed25519 cosignatures (C2SP
 * tlog-cosignature, type 0x04) and the check of a signed checkpoint against a
 * log key and a witness policy.
 */

import assert from "node:assert/strict";
import { sha256 } from "@noble/hashes/sha2.js";
import { base64 } from "@scure/base";
import { formatCheckpoint, parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { verifyCheckpoint } from "../../protocol/log/checkpoint_verify.ts";
import {
  cosignatureTimestamp,
  cosignedMessage,
  generateCosignerKey,
  parseCosignerKey,
  parseCosignerSignerKey,
} from "../../protocol/log/cosignature.ts";
import {
  formatSignedNote,
  generateNoteKey,
  openNote,
  parseSignedNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from "../../protocol/log/note.ts";

const ROOT = sha256(new TextEncoder().encode("root"));
const ROOT_B64 = base64.encode(ROOT);

Deno.test("a checkpoint is three lines: origin, size, base64 root hash", () => {
  const text = formatCheckpoint({ origin: "example.com/log", size: 20852163, rootHash: ROOT });
  assert.equal(text, `example.com/log\n20852163\n${ROOT_B64}\n`);
  assert.deepEqual(parseCheckpoint(text), {
    origin: "example.com/log",
    size: 20852163,
    rootHash: ROOT,
  });
  const extended = `${text}ext one\next two\n`;
  assert.deepEqual(parseCheckpoint(extended).extensions, ["ext one", "ext two"]);
  assert.equal(formatCheckpoint(parseCheckpoint(extended)), extended);
  assert.equal(parseCheckpoint(`o\n0\n${ROOT_B64}\n`).size, 0);
});

Deno.test("malformed checkpoints are refused", () => {
  const refused = [
    `example.com/log\n5\n${ROOT_B64}`, // no final newline
    `example.com/log\n5\n`,
    `\n5\n${ROOT_B64}\n`, // an empty origin
    `example.com/log\n05\n${ROOT_B64}\n`, // a leading zero
    `example.com/log\n-5\n${ROOT_B64}\n`,
    `example.com/log\n+5\n${ROOT_B64}\n`,
    `example.com/log\n5 \n${ROOT_B64}\n`,
    `example.com/log\n9007199254740992\n${ROOT_B64}\n`, // above 2^53 − 1
    `example.com/log\n5\n${ROOT_B64.slice(0, -1)}\n`, // unpadded
    `example.com/log\n5\n${base64.encode(ROOT.slice(1))}\n`, // 31 bytes
    `example.com/log\n5\n${ROOT_B64}\n\n`, // an empty extension line
    `example.com/log\n5\n${ROOT_B64}\nx\ty\n`,
  ];
  for (const text of refused) {
    assert.throws(() => parseCheckpoint(text), SyntaxError, JSON.stringify(text));
  }
  assert.throws(() => formatCheckpoint({ origin: "a\nb", size: 1, rootHash: ROOT }), TypeError);
  assert.throws(() => formatCheckpoint({ origin: "", size: 1, rootHash: ROOT }), TypeError);
  assert.throws(() => formatCheckpoint({ origin: "o", size: -1, rootHash: ROOT }), RangeError);
  assert.throws(
    () => formatCheckpoint({ origin: "o", size: 1, rootHash: ROOT.slice(1) }),
    TypeError,
  );
});

Deno.test("a cosignature signs cosignature/v1, the time line and the checkpoint", () => {
  const witness = parseCosignerSignerKey(generateCosignerKey("witness.example/w1").signerKey);
  const text = formatCheckpoint({ origin: "example.com/log", size: 3, rootHash: ROOT });
  const message = new TextDecoder().decode(cosignedMessage(text, 1679315147));
  assert.equal(message, `cosignature/v1\ntime 1679315147\n${text}`);
  const signature = witness.cosign(text, 1679315147);
  assert.equal(signature.signature.length, 72);
  assert.equal(cosignatureTimestamp(signature.signature), 1679315147);
  const verifier = parseCosignerKey(witness.verifierKey);
  assert.equal(verifier.keyId, signature.keyId);
  const bytes = new TextEncoder().encode(text);
  assert.ok(verifier.verify(bytes, signature.signature));
  assert.ok(
    !verifier.verify(new TextEncoder().encode(text.replace("\n3\n", "\n4\n")), signature.signature),
  );
  const otherTime = signature.signature.slice();
  otherTime[7] ^= 1;
  assert.ok(!verifier.verify(bytes, otherTime));
  assert.ok(!verifier.verify(bytes, signature.signature.slice(0, 71)));
  // The key id is over 0x04 ‖ key: the same key as a note key (0x01) has another id.
  const asNoteKey = `${verifier.name}+00000000+${
    base64.encode(new Uint8Array([1, ...verifier.publicKey]))
  }`;
  assert.throws(() => parseCosignerKey(asNoteKey), SyntaxError);
  assert.throws(() => parseCosignerKey(generateNoteKey("a").verifierKey), SyntaxError);
  assert.throws(() => witness.cosign(text, -1), RangeError);
  assert.throws(() => witness.cosign(text, 1.5), RangeError);
});

/** A log key, three witnesses, and a checkpoint signed by the log and cosigned by some. */
function setting(cosigners: number[], timestamp = 1_700_000_000) {
  const log = generateNoteKey("example.com/log");
  const witnesses = [1, 2, 3].map((i) => generateCosignerKey(`witness${i}.example`));
  const text = formatCheckpoint({ origin: "example.com/log", size: 7, rootHash: ROOT });
  const logSigned = parseSignedNote(signNote(text, [parseSignerKey(log.signerKey)]));
  const cosignatures = cosigners.map((i) =>
    parseCosignerSignerKey(witnesses[i].signerKey).cosign(text, timestamp)
  );
  const note = formatSignedNote({ text, signatures: [...logSigned.signatures, ...cosignatures] });
  return { log, witnesses: witnesses.map((w) => w.verifierKey), note, text };
}

Deno.test("a checkpoint is accepted with the log's signature and a quorum of witnesses", () => {
  const { log, witnesses, note } = setting([0, 2]);
  const verdict = verifyCheckpoint(note, { logKey: log.verifierKey, witnesses, quorum: 2 });
  assert.ok(verdict.ok);
  assert.equal(verdict.checkpoint.size, 7);
  assert.deepEqual(verdict.cosigned.map((c) => [c.name, c.timestamp]), [
    ["witness1.example", 1_700_000_000],
    ["witness3.example", 1_700_000_000],
  ]);
  const short = verifyCheckpoint(note, { logKey: log.verifierKey, witnesses, quorum: 3 });
  assert.equal(!short.ok && short.error, "quorum_not_met");
  // Cosignatures by witnesses the policy does not name are ignored.
  const alone = verifyCheckpoint(note, {
    logKey: log.verifierKey,
    witnesses: [witnesses[1]],
    quorum: 1,
  });
  assert.equal(!alone.ok && alone.error, "quorum_not_met");
  assert.ok(verifyCheckpoint(note, { logKey: log.verifierKey }).ok);
  // Go's note.Open sees the log's signature and ignores the cosignatures as unknown keys.
  const opened = openNote(note, [parseVerifierKey(log.verifierKey)]);
  assert.ok(opened.ok && opened.unverified.length === 2);
  assert.throws(
    () => verifyCheckpoint(note, { logKey: log.verifierKey, witnesses, quorum: 4 }),
    RangeError,
  );
});

Deno.test("a checkpoint is refused for its log signature, origin, cosignatures or form", () => {
  const { log, witnesses, note, text } = setting([0, 1]);
  const policy = { logKey: log.verifierKey, witnesses, quorum: 1 };
  const cases: [string, string][] = [
    [note.replace("\n7\n", "\n8\n"), "log_signature_invalid"],
    [note.replace(/\n— example\.com\/log [^\n]+/, ""), "no_log_signature"],
    [note.replace("\n\n", "\n"), "malformed_note"],
  ];
  for (const [changed, error] of cases) {
    const verdict = verifyCheckpoint(changed, policy);
    assert.equal(!verdict.ok && verdict.error, error, changed);
  }
  const other = verifyCheckpoint(note, { ...policy, origin: "example.com/other" });
  assert.equal(!other.ok && other.error, "origin_mismatch");
  // A named witness's bad cosignature rejects the note, as a known key's bad signature does.
  const parsed = parseSignedNote(note);
  const bad = { ...parsed.signatures[1], signature: parsed.signatures[1].signature.slice() };
  bad.signature[20] ^= 1;
  const forged = formatSignedNote({ text, signatures: [parsed.signatures[0], bad] });
  const verdict = verifyCheckpoint(forged, policy);
  assert.equal(!verdict.ok && verdict.error, "cosignature_invalid");
  // The log's key over a text that is not a checkpoint.
  const notCheckpoint = signNote("example.com/log\n7\n", [parseSignerKey(log.signerKey)]);
  const malformed = verifyCheckpoint(notCheckpoint, policy);
  assert.equal(!malformed.ok && malformed.error, "malformed_checkpoint");
});

Deno.test("cosignatures dated more than 60 s ahead of now do not count", () => {
  const { log, witnesses, note } = setting([0], 1_000_100);
  const policy = { logKey: log.verifierKey, witnesses, quorum: 1 };
  assert.ok(verifyCheckpoint(note, { ...policy, nowS: 1_000_040 }).ok);
  const early = verifyCheckpoint(note, { ...policy, nowS: 1_000_039 });
  assert.equal(!early.ok && early.error, "quorum_not_met");
});
