/**
 * Expiry of pending intents (docs/interface.md §10) against the real server, with
 * governed policies whose approval window is one or two seconds: at
 * `expires_at` every read and approval sees the intent expired at once, its
 * due work records its `intent.expired` event within 5 s while the process
 * that stored it runs, and within 5 s through another process when that one
 * was killed; an approval racing the deadline either accepts the intent or
 * finds it expired, never both. Each on a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import type { Harness } from "../support/harness.ts";
import { withProcess } from "../support/process.ts";
import { startServer } from "../support/server.ts";
import {
  addGoverned,
  authorizationOf,
  awaitEvent,
  bodyOf,
  ed25519Signer,
  feedEnd,
  getApprovals,
  getRecord,
  newSigned,
  postApproval,
  readFeed,
  type Signer,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";
import { sleepUntil } from "../support/time.ts";

/** Stores a pending intent under `policy`, signed by `by`; returns it and its deadline. */
async function pendingIntent(h: Harness, policy: string, by: Signer) {
  const signed = newSigned("policy", policy);
  const response = await h.submit(bodyOf(signed, await by.sign(signed)));
  const record = await response.json();
  assert.equal(response.status, 202, JSON.stringify(record));
  return { signed, record, deadline: Date.parse(record.approval.expires_at) };
}

/** The ids `GET /intents?state=` lists (the newest hundred). */
async function listed(h: Harness, state: string): Promise<string[]> {
  const response = await h.fetch(`/intents?state=${state}&limit=100`, {
    headers: { authorization: h.auth },
  });
  assert.equal(response.status, 200);
  const page = await response.json();
  for (const item of page.items) assert.equal(item.state, state);
  return page.items.map((item: Json) => item.id);
}

storeTest(
  "an intent past its deadline reads expired everywhere, and its event follows",
  async (store) => {
    await withProcess({ store }, async (h) => {
      const [e1, e2] = [ed25519Signer(), ed25519Signer()];
      const policy = await addGoverned(
        h,
        "policy",
        // Two seconds: the listings below come before the deadline on a busy machine too.
        authorizationOf([e1, e2], 2, { approval_window_s: 2 }),
      );
      const start = await feedEnd(h.url, h.server.adminToken);
      const { signed, record, deadline } = await pendingIntent(h, policy, e1);
      assert.equal(deadline, Date.parse(record.received_at) + 2000);
      assert.ok((await listed(h, "pending")).includes(signed.id));
      assert.ok(!(await listed(h, "expired")).includes(signed.id));

      const expiredEvent = awaitEvent(
        h.url,
        h.server.adminToken,
        start,
        (e) => e.record.id === signed.id && e.type === "intent.expired",
        deadline + 15_000 - Date.now(),
      );
      // Reads right after the deadline need no due work done: they see it expired at once.
      await sleepUntil(deadline + 1);
      const view = await getApprovals(h, signed.id);
      assert.deepEqual(await view.json(), { id: signed.id, state: "expired" });
      const late = await postApproval(h, signed.id, { signature: await e2.sign(signed) });
      assert.equal(late.status, 409);
      assert.deepEqual((await late.json()).code, "not_pending");
      const stored = await getRecord(h, signed.id);
      assert.deepEqual(stored, { ...record, state: "expired" });
      assert.ok((await listed(h, "expired")).includes(signed.id));
      assert.ok(!(await listed(h, "pending")).includes(signed.id));
      assert.ok(!(await listed(h, "accepted")).includes(signed.id));

      const found = await expiredEvent;
      assert.ok(found, "no intent.expired event within 15 s of the deadline");
      const delay = found.seenAt - deadline;
      console.log(`intent.expired read ${delay} ms after the deadline (same process)`);
      assert.ok(delay <= 5_000, `intent.expired came ${delay} ms after the deadline`);
      assert.deepEqual(found.event.record, { ...record, state: "expired" });
      const life = (await readFeed(h.url, h.server.adminToken, start))
        .filter((e) => e.record.id === signed.id);
      assert.deepEqual(life.map((e) => e.type), ["intent.pending", "intent.expired"]);
      // Still 409 not_pending after the event, and the id stays taken: by the same body
      // again (a replay, expired) or by another signer's.
      const again = await postApproval(h, signed.id, { signature: await e2.sign(signed) });
      assert.equal((await again.json()).code, "not_pending");
      const replayed = await h.submit(bodyOf(signed, await e1.sign(signed)));
      assert.equal(replayed.status, 200);
      assert.equal((await replayed.json()).state, "expired");
      const retaken = await h.submit(bodyOf(signed, await e2.sign(signed)));
      assert.equal((await retaken.json()).code, "intent_exists");
    });
  },
);

storeTest("an approval racing the deadline: accepted or expired, never both", async (store) => {
  await withProcess({ store }, async (h) => {
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(
      h,
      "policy",
      authorizationOf([e1, e2], 2, { approval_window_s: 1 }),
    );
    const start = await feedEnd(h.url, h.server.adminToken);
    const intents = [];
    for (let k = 0; k < 12; k++) intents.push(await pendingIntent(h, policy, e1));
    // Each approval is sent at its intent's deadline, from 60 ms before to 50 ms after.
    const answers = await Promise.all(intents.map(async ({ signed, deadline }, k) => {
      const body = JSON.stringify({ signature: await e2.sign(signed) });
      await sleepUntil(deadline - 60 + 10 * k);
      const response = await postApproval(h, signed.id, body);
      return { status: response.status, body: await response.json() };
    }));
    await sleepUntil(Math.max(...intents.map((i) => i.deadline)) + 6_000);
    const feed = await readFeed(h.url, h.server.adminToken, start);
    let accepted = 0;
    intents.forEach(({ signed }, k) => {
      const life = feed.filter((e) => e.record.id === signed.id).map((e) => e.type);
      const answer = answers[k];
      if (answer.status === 200) {
        accepted++;
        assert.deepEqual(answer.body, { id: signed.id, state: "accepted" });
        assert.deepEqual(life, ["intent.pending", "intent.accepted"], `intent ${k}`);
      } else {
        assert.equal(answer.status, 409, JSON.stringify(answer));
        assert.equal(answer.body.code, "not_pending");
        assert.deepEqual(life, ["intent.pending", "intent.expired"], `intent ${k}`);
      }
    });
    for (const [k, { signed }] of intents.entries()) {
      const state = answers[k].status === 200 ? "accepted" : "expired";
      assert.equal((await getRecord(h, signed.id)).state, state);
      assert.deepEqual(await (await getApprovals(h, signed.id)).json(), { id: signed.id, state });
    }
    console.log(`racing the deadline: ${accepted} accepted, ${intents.length - accepted} expired`);
  });
});

// The process that stored the intent is killed before the deadline: its due work is in KV,
// where the other process's look (at least every 2 s) finds it.
storeTest(
  "the storing process killed before the deadline: another records the expiry",
  async (store) => {
    await withProcess({ store }, async (h) => {
      const survivor = await startServer({ kvPath: h.server.kvPath });
      try {
        const [e1, e2] = [ed25519Signer(), ed25519Signer()];
        const policy = await addGoverned(
          h,
          "policy",
          authorizationOf([e1, e2], 2, { approval_window_s: 3 }),
        );
        const token = h.server.adminToken;
        const start = await feedEnd(survivor.url, token);
        const { signed, record, deadline } = await pendingIntent(h, policy, e1);
        await h.server.stop({ kill: true });
        assert.ok(Date.now() < deadline, "the kill came after the deadline");
        const found = await awaitEvent(
          survivor.url,
          token,
          start,
          (e) => e.record.id === signed.id && e.type === "intent.expired",
          deadline + 15_000 - Date.now(),
        );
        assert.ok(found, "no intent.expired event within 15 s of the deadline");
        const delay = found.seenAt - deadline;
        console.log(`intent.expired read ${delay} ms after the deadline (other process)`);
        assert.ok(delay <= 5_000, `intent.expired came ${delay} ms after the deadline`);
        assert.deepEqual(found.event.record, { ...record, state: "expired" });
        const life = (await readFeed(survivor.url, token, start))
          .filter((e) => e.record.id === signed.id);
        assert.deepEqual(life.map((e) => e.type), ["intent.pending", "intent.expired"]);
      } finally {
        await survivor.stop();
      }
    });
  },
);
