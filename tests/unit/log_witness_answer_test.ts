/**
 * What the log makes of a witness's answers (`judgeWitnessAnswer`, C2SP
 * tlog-witness): a cosignature that verifies with a timestamp at most 60 s
 * ahead, a 409's `text/x.tlog.size`, a 422 (a fork), a 403 or 404 (a
 * configuration error), and the rest.
 */

import assert from "node:assert/strict";
import { formatCheckpoint } from "../../protocol/log/checkpoint.ts";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { leafHash, treeHash } from "../../protocol/log/hash.ts";
import {
  formatSignedNote,
  generateNoteKey,
  parseSignerKey,
  signNote,
} from "../../protocol/log/note.ts";
import { judgeWitnessAnswer } from "../../src/log/witness_call.ts";

const ORIGIN = "tool.test/log";
const log = generateNoteKey(ORIGIN);
const witness = generateCosignerKey("tool.test/witness");
const leaves = Array.from({ length: 3 }, (_, i) => leafHash(new TextEncoder().encode(`e${i}`)));

function checkpoint(size: number): string {
  const rootHash = treeHash(leaves.slice(0, size));
  return signNote(formatCheckpoint({ origin: ORIGIN, size, rootHash }), [
    parseSignerKey(log.signerKey),
  ]);
}

Deno.test("the log reads a witness's answers: a cosignature, a 409's size, a fork, a configuration error", () => {
  const signedNote = checkpoint(3);
  const options = {
    signedNote,
    logKey: log.verifierKey,
    witnessKey: witness.verifierKey,
    nowS: 1_800_000_000,
  };
  const cosigner = parseCosignerSignerKey(witness.signerKey);
  const text = signedNote.slice(0, signedNote.indexOf("\n\n") + 1);
  const answerWith = (timestamp: number) =>
    new TextEncoder().encode(
      formatSignedNote({ text: "x\n", signatures: [cosigner.cosign(text, timestamp)] }).slice(3),
    );
  const judge = (answer: Parameters<typeof judgeWitnessAnswer>[0]) =>
    judgeWitnessAnswer(answer, options).outcome;
  assert.equal(judge({ status: 200, durationMs: 1, body: answerWith(options.nowS) }), "cosigned");
  assert.equal(
    judge({ status: 200, durationMs: 1, body: answerWith(options.nowS + 61) }),
    "bad_answer",
  );
  assert.equal(judge({ status: 200, durationMs: 1, body: answerWith(0) }), "bad_answer");
  assert.equal(
    judge({ status: 200, durationMs: 1, body: new TextEncoder().encode("ok\n") }),
    "bad_answer",
  );
  const size = (text: string, contentType = "text/x.tlog.size") =>
    judgeWitnessAnswer({
      status: 409,
      durationMs: 1,
      body: new TextEncoder().encode(text),
      contentType,
    }, options);
  assert.deepEqual(size("12\n"), { outcome: "conflict", size: 12 });
  assert.equal(size("12").outcome, "bad_answer");
  assert.equal(size("012\n").outcome, "bad_answer");
  assert.equal(size("12\n", "text/plain").outcome, "bad_answer");
  assert.equal(judge({ status: 422, durationMs: 1 }), "fork");
  assert.equal(judge({ status: 403, durationMs: 1 }), "configuration");
  assert.equal(judge({ status: 404, durationMs: 1 }), "configuration");
  assert.equal(judge({ status: 400, durationMs: 1 }), "rejected");
  assert.equal(judge({ status: 503, durationMs: 1 }), "http_error");
  assert.equal(judge({ status: null, durationMs: 1 }), "unreachable");
});
