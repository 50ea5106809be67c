/**
 * A verify worker's fault (an error that is no refusal of the body) is
 * reported, and the body is verified on the calling thread instead; each
 * thread verifies with caches of its own.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { generateEd25519Key, newIntentId, signVariantB } from "../../client/mod.ts";
import { verifyContext } from "../../src/domain/authorship.ts";
import { VerifyPool } from "../../src/workers/verify_pool.ts";
import { policy } from "../support/passkey_assertions.ts";

Deno.test("a worker's fault is reported and the body verified on the calling thread", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verify-pool-fault-" });
  const workerUrl = new URL(`file://${join(dir, "worker.js")}`);
  // Answers every body with a fault, as a worker whose code throws would.
  await Deno.writeTextFile(
    workerUrl,
    `self.onmessage = (e) => {
      if (e.data.type === "work") {
        self.postMessage(e.data.jobs.map(({ id }) => ({ id, fault: "TypeError: broken" })));
      }
    };\n`,
  );
  const faults: string[] = [];
  const ctx = verifyContext(policy);
  const pool = new VerifyPool(1, ctx, { workerUrl, onFault: (fault) => faults.push(fault) });
  try {
    const key = generateEd25519Key();
    const body = new TextEncoder().encode(
      JSON.stringify(signVariantB({ id: newIntentId(), policy_id: "pol" }, key)),
    );
    const verified = await (await pool.read(body)).verify();
    assert.equal(verified.verified?.authorship.kind, "Ed25519");
    assert.deepEqual(faults, ["TypeError: broken"]);
    // Verified on this thread: its key is in this thread's cache.
    assert.equal(ctx.keys.size, 1);
    assert.equal(pool.threads, 1, "a worker that answers is kept");
  } finally {
    pool.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyContext gives each thread caches of its own", () => {
  const a = verifyContext(policy);
  const b = verifyContext(policy);
  assert.notEqual(a.keys, b.keys);
  assert.equal(a.passkey.rpIdHashes?.length, policy.rpIds.length);
});
