/**
 * The verification pool answers exactly as verifying on the calling thread does:
 * the same verified submission, or the same refusal, for valid and hostile
 * bodies of every kind, many at once; and a pool whose workers fail or are
 * closed still answers every body. Between reading a body and verifying it,
 * the caller's gate sees it once, and a body it refuses is never verified.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  ed25519Signature,
  generateEd25519Key,
  multisigSignature,
  signVariantA,
  signVariantB,
  unsignedVariantB,
  variantBBody,
} from "../../client/mod.ts";
import { ServiceError } from "../../src/errors.ts";
import type { SubmissionSummary, VerifiedSubmission } from "../../src/domain/verify_submission.ts";
import { verifyContext } from "../../src/domain/authorship.ts";
import { inlineVerifier, type Verifier, VerifyPool } from "../../src/workers/verify_pool.ts";
import {
  keyText,
  newIntent,
  newPayload,
  passkeySig,
  SoftwarePasskey,
} from "../support/fixtures.ts";
import { policy } from "../support/passkey_assertions.ts";

const ctx = verifyContext(policy);
const encoder = new TextEncoder();
const encode = (value: unknown) => encoder.encode(JSON.stringify(value));

/** Bodies of every kind: valid, forged, malformed. */
async function bodies(): Promise<Uint8Array[]> {
  const key = generateEd25519Key();
  const other = generateEd25519Key();
  const passkey = await SoftwarePasskey.create();
  const a = signVariantA(newPayload("tpl", { attrs: { fields: { n: 1e21 } } }), key);
  const b = signVariantB(newIntent("pol"), key);
  const forged = structuredClone(b) as unknown as { intent: { id: string } };
  forged.intent.id = crypto.randomUUID();
  const intent = newIntent("pol");
  const multisig = variantBBody(
    intent,
    multisigSignature({
      signers: { [keyText(key)]: 1, [keyText(other)]: 1 },
      threshold: 2,
      signatures: [ed25519Signature(intent, key), ed25519Signature(intent, other)],
    }),
  );
  const passkeyIntent = newIntent("pol");
  const viaPasskey = variantBBody(passkeyIntent, await passkeySig(passkey, passkeyIntent));
  return [
    encode(a),
    encoder.encode(JSON.stringify(b, null, 2)),
    encode(forged),
    encode(multisig),
    encode(viaPasskey),
    encode(unsignedVariantB(newIntent("pol"))),
    encode({ payload: {}, signature: {} }),
    encoder.encode('{"a":1,"a":2}'),
    encoder.encode("[1,2"),
    encoder.encode(
      `{"authorship":"Unsigned","intent":{"id":"x","policy_id":"p","n":${"9".repeat(400)}}}`,
    ),
  ];
}

/**
 * Reads a body, passes its summary through `gate` (as `POST /intents` charges
 * its work and finds its document), then verifies it, or drops it when the
 * gate refuses.
 */
async function through(
  verifier: Verifier,
  bytes: Uint8Array,
  gate?: (summary: SubmissionSummary) => void,
): Promise<VerifiedSubmission> {
  const body = await verifier.read(bytes);
  try {
    gate?.(body.summary);
  } catch (error) {
    body.drop();
    throw error;
  }
  return await body.verify();
}

/** What verifying came to, in a form `deepEqual` compares. */
async function outcome(verifier: Verifier, bytes: Uint8Array): Promise<unknown> {
  try {
    return { verified: await through(verifier, bytes) };
  } catch (error) {
    assert.ok(error instanceof ServiceError, `not a ServiceError: ${error}`);
    return { refused: [error.name, error.code, error.message] };
  }
}

Deno.test("a pool verifies every body exactly as the calling thread does", async () => {
  const pool = new VerifyPool(2, ctx);
  try {
    assert.equal(pool.threads, 2);
    const inline = inlineVerifier(ctx);
    const all = await bodies();
    // Many at once: batches of several bodies, across both workers.
    const many = Array.from({ length: 20 }, () => all).flat();
    const [fromPool, fromInline] = await Promise.all([
      Promise.all(many.map((bytes) => outcome(pool, bytes))),
      Promise.all(many.map((bytes) => outcome(inline, bytes))),
    ]);
    assert.deepEqual(fromPool, fromInline);
    const kinds = new Set(fromPool.map((o) => Object.keys(o as object)[0]));
    assert.deepEqual([...kinds].sort(), ["refused", "verified"]);
  } finally {
    pool.close();
  }
});

Deno.test("a closed pool answers what it held and verifies later bodies itself", async () => {
  const pool = new VerifyPool(1, ctx);
  const all = await bodies();
  const held = all.map((bytes) => outcome(pool, bytes));
  pool.close();
  assert.equal(pool.threads, 0);
  const later = await outcome(pool, all[0]);
  const expected = await Promise.all(all.map((bytes) => outcome(inlineVerifier(ctx), bytes)));
  assert.deepEqual(await Promise.all(held), expected);
  assert.deepEqual(later, expected[0]);
});

/**
 * Runs every kind of body through a pool of `threads` workers running
 * `source`, and asserts the answers are the calling thread's and that no
 * worker is left (one that never answered is not started again).
 */
async function answersWithout(source: string, threads: number, stallMs?: number) {
  const dir = await Deno.makeTempDir({ prefix: "verify-pool-" });
  const workerUrl = new URL(`file://${join(dir, "worker.ts")}`);
  await Deno.writeTextFile(workerUrl, source);
  const pool = new VerifyPool(threads, ctx, { workerUrl, stallMs });
  try {
    const all = await bodies();
    const got = await Promise.all(all.map((bytes) => outcome(pool, bytes)));
    const expected = await Promise.all(all.map((bytes) => outcome(inlineVerifier(ctx), bytes)));
    assert.deepEqual(got, expected);
    assert.equal(pool.threads, 0);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("workers that cannot start leave the calling thread verifying", async () => {
  await answersWithout('throw new Error("this worker does not start");\n', 2);
});

Deno.test("a worker that holds bodies without answering is stopped, and they are answered", async () => {
  await answersWithout("self.onmessage = () => {};\n", 1, 200);
});

Deno.test("a body read and verified: the stored body is the compact text, and attrs are the signed object's", async () => {
  const key = generateEd25519Key();
  const payload = newPayload("tpl", { attrs: { fields: { big: 1e21, small: 5e-7 } } });
  const spaced = encoder.encode(JSON.stringify(signVariantA(payload, key), null, 1));
  const result = await through(inlineVerifier(ctx), spaced);
  assert.equal(
    new TextDecoder().decode(result.body),
    JSON.stringify(JSON.parse(new TextDecoder().decode(spaced))),
  );
  assert.deepEqual(result.attrs, payload.attrs);
  assert.deepEqual(result.submission, {
    variant: "A",
    id: payload.id,
    refKind: "template",
    refId: "tpl",
  });
  assert.equal(result.verified?.authorship.kind, "Ed25519");
});

/** A gate that records the summaries it saw and refuses those whose policy is `refused`. */
function recordingGate() {
  const seen: SubmissionSummary[] = [];
  const gate = (summary: SubmissionSummary) => {
    seen.push(summary);
    if (summary.submission.refId === "refused") {
      throw new ServiceError("policy_not_found", "intent.policy_id: no such policy");
    }
  };
  return { seen, gate };
}

Deno.test("the gate sees every read body once, before its signature is verified, on a worker as inline", async () => {
  const key = generateEd25519Key();
  const other = generateEd25519Key();
  const single = (policy: string) => encode(signVariantB(newIntent(policy), key));
  const multisig = (policy: string, forged = false) => {
    const intent = newIntent(policy);
    const second = ed25519Signature(forged ? newIntent(policy) : intent, other);
    return encode(variantBBody(
      intent,
      multisigSignature({
        signers: { [keyText(key)]: 1, [keyText(other)]: 1 },
        threshold: 2,
        signatures: [ed25519Signature(intent, key), second],
      }),
    ));
  };
  const cases = [
    single("pol"),
    single("pol"),
    multisig("pol"),
    // Refused by the gate: its forged signature is never reported.
    multisig("refused", true),
    single("refused"),
    multisig("pol", true),
    encode(unsignedVariantB(newIntent("refused"))),
  ];
  const pool = new VerifyPool(1, ctx);
  try {
    for (const verifier of [inlineVerifier(ctx), pool]) {
      const { seen, gate } = recordingGate();
      const answers = [];
      // One after another: a worker learns "pol" exists from the first gate it passes.
      for (const bytes of cases) {
        try {
          answers.push((await through(verifier, bytes, gate)).verified?.authorship.kind ?? null);
        } catch (error) {
          answers.push((error as ServiceError).code);
        }
      }
      assert.deepEqual(answers, [
        "Ed25519",
        "Ed25519",
        "Multisig",
        "policy_not_found",
        "policy_not_found",
        "invalid_signature",
        "policy_not_found",
      ], `threads ${verifier.threads}`);
      assert.deepEqual(seen.map((s) => [s.submission.refId, s.work, s.signed]), [
        ["pol", 1, true],
        ["pol", 1, true],
        ["pol", 2, true],
        ["refused", 2, true],
        ["refused", 1, true],
        ["pol", 2, true],
        ["refused", 1, false],
      ]);
    }
  } finally {
    pool.close();
  }
});

Deno.test("a worker that dies after its gate passed: answered on the calling thread, the gate not run again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verify-pool-gate-" });
  const workerUrl = new URL(`file://${join(dir, "worker.js")}`);
  // Answers every body with its summary; dies when told to verify one.
  await Deno.writeTextFile(
    workerUrl,
    `self.onmessage = (e) => {
      if (e.data.type !== "work") return;
      if (e.data.go.length > 0) throw new Error("gone");
      self.postMessage(e.data.jobs.map(({ id }) => ({
        id,
        read: { submission: { variant: "B", id: "x", refKind: "policy", refId: "pol" }, work: 2, signed: true },
      })));
    };\n`,
  );
  const pool = new VerifyPool(1, ctx, { workerUrl });
  try {
    const { seen, gate } = recordingGate();
    const body = encode(signVariantB(newIntent("pol"), generateEd25519Key()));
    const verified = await through(pool, body, gate);
    assert.equal(verified.verified?.authorship.kind, "Ed25519");
    assert.equal(seen.length, 1);
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});
