/**
 * A store that applies a commit and loses its answer (docs/interface.md §4, §10): a
 * server on KV Connect whose every second atomic write is applied and then
 * answered 503, as a connection cut after the commit. Deno's KV client sends
 * the write again and its checks fail; the service still answers every
 * submission, approval and rejection as what happened: a submission 201 or
 * 200 with its own record (never 409 for its own write), a decision 200 with
 * the view after it. Every change is in the feed exactly once, every decision
 * counted once, and no pending count is left behind.
 */

import assert from "node:assert/strict";
import { sleep } from "../support/time.ts";
import { generateEd25519Key, signVariantA, signVariantB } from "../../client/mod.ts";
import { newIntent, newPayload } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withProcess } from "../support/process.ts";
import {
  authorizationOf,
  bodyOf,
  ed25519Signer,
  type FeedEvent,
  getRecord,
  newSigned,
  postApproval,
  postRejection,
  readFeed,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { needsKvConnect, newTestStore } from "../support/stores.ts";
import type { Payload } from "../../client/mod.ts";

/**
 * Stores a document and returns its id. A lost answer of its write reads as
 * "stored already" (200): documents are content-addressed, so either is it.
 */
async function addDocument(h: Harness, kind: "template" | "policy", text: string) {
  const response = await h.fetch(kind === "template" ? "/templates" : "/policies", {
    method: "POST",
    headers: { authorization: h.auth, "content-type": "application/json" },
    body: text,
  });
  const body = await response.json();
  assert.ok(response.status === 201 || response.status === 200, JSON.stringify(body));
  return body.id as string;
}

/** Submissions answered 200: stored by a write whose answer was lost. */
let replays = 0;

/** Submits `body`: stored now (201, 202) or stored by the write whose answer was lost (200). */
async function submitted(h: Harness, body: unknown, stored: number[]): Promise<Json> {
  const response = await h.submit(body);
  if (response.status === 200) replays++;
  const record = await response.json();
  assert.ok(
    stored.includes(response.status) || response.status === 200,
    `${response.status} ${JSON.stringify(record)}`,
  );
  if (response.status === 200) assert.equal(response.headers.get("idempotent-replayed"), "true");
  const sent = body as Json;
  assert.deepEqual(record.request, sent);
  return record;
}

async function decided(response: Response): Promise<Json> {
  const view = await response.json();
  assert.equal(response.status, 200, JSON.stringify(view));
  return view;
}

Deno.test(
  "answers the store lost: every request learns what happened, and it happened once",
  needsKvConnect(),
  async () => {
    const store = await newTestStore("kv_connect", { loseAnswers: 2 });
    try {
      await withProcess({ store, env: { MAX_PENDING_PER_SIGNER: "2" } }, async (h) => {
        const template = await addDocument(h, "template", `{"lost":"${crypto.randomUUID()}"}`);
        const policy = await addDocument(h, "policy", `{"lost":"${crypto.randomUUID()}"}`);
        const key = generateEd25519Key();
        const ids: string[] = [];
        for (let i = 0; i < 12; i++) {
          const body = i % 2 === 0
            ? signVariantA(newPayload(template), key)
            : signVariantB(newIntent(policy), key);
          const record = await submitted(h, body, [201]);
          assert.equal(record.state, "accepted");
          ids.push(record.id as string);
        }

        // Governed: four signers of weight 1, threshold 3; a submits, the others decide.
        const [a, b, c, d] = [ed25519Signer(), ed25519Signer(), ed25519Signer(), ed25519Signer()];
        const text = JSON.stringify({
          rules: "lost",
          authorization: authorizationOf([a, b, c, d], 3),
        });
        const governed = await addDocument(h, "policy", text);
        const lives: Record<string, string> = {};
        for (let round = 0; round < 3; round++) {
          // Twice pending for a: at its limit of 2 each round, and the limit still holds.
          const accepted = newSigned("policy", governed) as Payload;
          const rejected = newSigned("policy", governed) as Payload;
          for (const signed of [accepted, rejected]) {
            const record = await submitted(h, bodyOf(signed, await a.sign(signed)), [202]);
            assert.equal(record.state, "pending");
          }
          const third = newSigned("policy", governed) as Payload;
          const over = await h.submit(bodyOf(third, await a.sign(third)));
          assert.equal(over.status, 429, await over.text());

          // b and c approve the first: pending, then accepted.
          const afterB = await decided(
            await postApproval(h, accepted.id, {
              signature: await b.sign(accepted),
            }),
          );
          assert.equal(afterB.state, "pending");
          assert.equal((afterB.approval as Json).weight, 2);
          const afterC = await decided(
            await postApproval(h, accepted.id, {
              signature: await c.sign(accepted),
            }),
          );
          assert.deepEqual(afterC, { id: accepted.id, state: "accepted" });
          // c and d reject the second: still pending after one, rejected after the other.
          const afterRejectC = await decided(
            await postRejection(h, rejected.id, {
              signature: await c.reject(rejected),
            }),
          );
          assert.equal(afterRejectC.state, "pending");
          const afterRejectD = await decided(
            await postRejection(h, rejected.id, {
              signature: await d.reject(rejected),
            }),
          );
          assert.deepEqual(afterRejectD, { id: rejected.id, state: "rejected" });
          lives[accepted.id] = "intent.pending intent.approval_added intent.accepted";
          lives[rejected.id] = "intent.pending intent.rejection_added intent.rejected";

          const record = await getRecord(h, accepted.id);
          assert.deepEqual(
            (record.approval as { approvals: Json[] }).approvals.map((x) => x.key),
            [a.key, b.key, c.key],
          );
        }

        // The lost answers did happen: a fair share of the submissions learned of their commit so.
        assert.ok(replays >= 3, `only ${replays} submissions were answered after a lost answer`);

        // The feed: each intent once per change, in order, within its bound of 2 s (a change
        // whose answer the store lost is staged all the same, by a commit this process never saw).
        const complete = (events: FeedEvent[]) =>
          Object.entries(lives).every(([id, life]) =>
            events.filter((e) => e.record.id === id).length === life.split(" ").length
          );
        let feed: FeedEvent[] = await readFeed(h.url, h.adminToken);
        for (
          const deadline = performance.now() + 2_000;
          !complete(feed) && performance.now() < deadline;
        ) {
          await sleep(50);
          feed = await readFeed(h.url, h.adminToken);
        }
        for (const id of ids) {
          assert.deepEqual(feed.filter((e) => e.record.id === id).map((e) => e.type), [
            "intent.accepted",
          ]);
        }
        for (const [id, life] of Object.entries(lives)) {
          const types = feed.filter((e) => e.record.id === id).map((e) => e.type);
          assert.equal(types.join(" "), life);
        }
        assert.deepEqual(feed.map((e) => e.id), feed.map((_, i) => String(i + 1)));

        // Nothing pending is left, and so no count.
        const kv = await store.open();
        try {
          for (const prefix of [["pending_by_signer"], ["pending_counts"]]) {
            const counts = await Array.fromAsync(kv.list({ prefix }));
            assert.deepEqual(counts.map((e) => e.key), []);
          }
        } finally {
          kv.close();
        }
      });
    } finally {
      await store.close();
    }
  },
);
