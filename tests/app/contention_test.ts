/**
 * Writes that keep losing to other writers of the same data (docs/interface.md
 * §8): tried again with jittered backoff up to a bound, then answered 503
 * `unavailable` with `Retry-After`, never left waiting without end and never a
 * 500; nothing of the refused write is stored. A submission, an approval and a
 * rejection are answered so; an expiry, which no request waits for, is given
 * up (counted in `intents_store_contended_total`) and its due work left for a
 * later look. Contention is made as other processes make it: writers that
 * keep rewriting a document's pending counts on the same real KV.
 */

import assert from "node:assert/strict";
import type { Payload } from "../../client/mod.ts";
import { expectError } from "../support/fixtures.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  expectIdFree,
  getApprovals,
  newSigned,
  postApproval,
  postRejection,
} from "../support/governed.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { sleepUntil } from "../support/time.ts";

/** Writers that rewrite `key` with `value` without pause, as many processes at once would. */
function keepRewriting(kv: Deno.Kv, key: Deno.KvKey, value: Uint8Array): () => Promise<void> {
  let rewriting = true;
  const writers = Promise.all(Array.from({ length: 8 }, async () => {
    while (rewriting) await kv.set(key, value);
  }));
  return async () => {
    rewriting = false;
    await writers;
  };
}

/**
 * Rewrites a document's pending counts with the value they hold (so what they
 * say stays true) while `fn` runs, as processes storing and ending pending
 * intents under the document at once would.
 */
async function whileCountsChange<T>(
  h: AppHarness,
  policy: string,
  fn: () => Promise<T>,
): Promise<T> {
  const key = ["pending_counts", "policy", policy];
  const held = await h.kv.get<Uint8Array>(key);
  assert.ok(held.value instanceof Uint8Array, "the document has pending counts");
  const stop = keepRewriting(h.kv, key, held.value);
  try {
    return await fn();
  } finally {
    await stop();
  }
}

/**
 * Asserts the 503 of a write given up, answered within the retries' bound;
 * false, with nothing asserted, when the write got through: on a loaded
 * machine the other writers do not always get between its reads and its
 * commits, and the caller tries again with a fresh write.
 */
async function expectContended(answer: () => Promise<Response>): Promise<boolean> {
  const started = performance.now();
  const response = await answer();
  const ms = performance.now() - started;
  if (response.status < 300) {
    await response.body?.cancel();
    return false;
  }
  assert.equal(response.headers.get("retry-after"), "1");
  await expectError(response, 503, "unavailable", { mentions: "try again" });
  assert.ok(ms < 10_000, `answered after ${ms} ms`);
  return true;
}

/** Runs `attempt` until it met the contention it needs (true), five times at most. */
async function untilContended<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 5; i++) {
    const met = await attempt();
    if (met !== undefined) return met;
  }
  throw new Error("the other writers never got between a read and its commit");
}

const contended = async (h: AppHarness) =>
  sampleValue(await scrape(h), "intents_store_contended_total", {});

/** A 2-of-2 policy and an intent under it, pending with the first signer's submission. */
async function pendingIntent(h: AppHarness, extra: Record<string, unknown> = {}) {
  const [a, b] = [ed25519Signer(), ed25519Signer()];
  const policy = await addGoverned(h, "policy", authorizationOf([a, b], 2, extra));
  const signed = newSigned("policy", policy) as Payload;
  const response = await h.submit(bodyOf(signed, await a.sign(signed)));
  const record = await response.json();
  assert.equal(response.status, 202, JSON.stringify(record));
  return { policy, signed, b, record };
}

/** The state and approvals of an intent's view. */
async function viewOf(h: AppHarness, id: string) {
  const response = await getApprovals(h, id);
  const view = await response.json();
  assert.equal(response.status, 200, JSON.stringify(view));
  return {
    state: view.state,
    approvals: view.approval?.approvals.length,
    rejections: view.approval?.rejections.length,
  };
}

Deno.test("a pending submission whose document's counts keep changing under it: 503 with Retry-After", async () => {
  await withApp({}, async (h) => {
    const [a, b] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([a, b], 2));
    // Another writer rewrites the policy's pending counts without pause, as many processes
    // storing pending intents under it at once would.
    const stop = keepRewriting(
      h.kv,
      ["pending_counts", "policy", policy],
      new TextEncoder().encode("{}"),
    );
    try {
      const { signed, body } = await untilContended(async () => {
        const signed = newSigned("policy", policy) as Payload;
        const body = bodyOf(signed, await a.sign(signed));
        return await expectContended(() => h.submit(body)) ? { signed, body } : undefined;
      });
      await stop();
      await expectIdFree(h, signed.id);
      // Once the other writer stops, the same submission is stored.
      const again = await h.submit(body);
      assert.equal(again.status, 202);
      await again.body?.cancel();
    } finally {
      await stop();
    }
  });
});

Deno.test("an approval that would accept, while the document's counts keep changing: 503 with Retry-After, nothing recorded", async () => {
  await withApp({}, async (h) => {
    const { signed, body } = await untilContended(async () => {
      const { policy, signed, b } = await pendingIntent(h);
      const body = { signature: await b.sign(signed) };
      const before = await contended(h);
      const met = await whileCountsChange(
        h,
        policy,
        () => expectContended(() => postApproval(h, signed.id, body)),
      );
      if (met) assert.equal(await contended(h), before + 1);
      return met ? { signed, body } : undefined;
    });
    assert.deepEqual(await viewOf(h, signed.id), { state: "pending", approvals: 1, rejections: 0 });
    // Once the other writers stop, the same approval is recorded and accepts the intent.
    const again = await postApproval(h, signed.id, body);
    assert.equal(again.status, 200);
    assert.equal((await again.json()).state, "accepted");
  });
});

Deno.test("a rejection that would reject, while the document's counts keep changing: 503 with Retry-After, nothing recorded", async () => {
  await withApp({}, async (h) => {
    const { signed, body } = await untilContended(async () => {
      const { policy, signed, b } = await pendingIntent(h);
      const body = { signature: await b.reject(signed) };
      const before = await contended(h);
      const met = await whileCountsChange(
        h,
        policy,
        () => expectContended(() => postRejection(h, signed.id, body)),
      );
      if (met) assert.equal(await contended(h), before + 1);
      return met ? { signed, body } : undefined;
    });
    assert.deepEqual(await viewOf(h, signed.id), { state: "pending", approvals: 1, rejections: 0 });
    const again = await postRejection(h, signed.id, body);
    assert.equal(again.status, 200);
    assert.equal((await again.json()).state, "rejected");
  });
});

Deno.test("an expiry while the document's counts keep changing: given up and counted, its due work kept, then recorded once", async () => {
  // No scheduler of its own: the test looks for due work as the cron job does.
  await withApp({ background: false }, async (h) => {
    const expiredIds = async (): Promise<string[]> => {
      await h.service.store.moveAll();
      const page = await (await h.fetch("/events?limit=1000", {
        headers: { authorization: h.auth },
      })).json();
      return page.events.filter((e: { type: string }) => e.type === "intent.expired")
        .map((e: { record: { id: string } }) => e.record.id);
    };
    const due = async () =>
      (await h.service.store.listDueWork({ kind: "expire", limit: 10 })).map((w) => w.id);
    const signed = await untilContended(async () => {
      const { policy, signed, record } = await pendingIntent(h, { approval_window_s: 1 });
      await sleepUntil(Date.parse(record.approval.expires_at) + 1);
      const before = await contended(h);
      const done = await whileCountsChange(h, policy, () => h.service.dueWork.runDue());
      // Recorded all the same: the next attempt, with a new intent.
      if (done === 1) return undefined;
      assert.equal(done, 0, "the expiry was given up");
      assert.equal(await contended(h), before + 1);
      return signed;
    });
    const expired = async () => (await expiredIds()).filter((id) => id === signed.id).length;
    assert.equal(await expired(), 0);
    assert.deepEqual(await due(), [signed.id]);
    // Once the other writers stop, the next look records it, once.
    assert.equal(await h.service.dueWork.runDue(), 1);
    assert.equal(await expired(), 1);
    assert.deepEqual(await due(), []);
    assert.equal(await h.service.dueWork.runDue(), 0);
    assert.equal(await expired(), 1);
  });
});
