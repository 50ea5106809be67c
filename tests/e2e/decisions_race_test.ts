/**
 * Approvals, rejections and the expiry racing on one intent across
 * processes (docs/interface.md §10, §12): two server processes sharing a store (a KV
 * file, or denokv over KV Connect). Sixteen signers of weight 1, threshold 9,
 * the submission approving: fifteen decisions at once, approvals and
 * rejections mixed, some sent twice, some at the deadline. Each decision is
 * counted once or refused as too late; the intent reaches exactly one final
 * state, accepted, rejected or expired, with exactly one final event, which
 * is the state every reader sees. And the pending limit holds exactly across
 * the processes.
 */

import assert from "node:assert/strict";
import { pendingCountOf } from "../support/layouts.ts";
import { harnessFor, startProcess } from "../support/process.ts";
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
  postRejection,
  readFeed,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";
import type { Payload } from "../../client/mod.ts";
import { sleepUntil } from "../support/time.ts";

const SIGNERS = 16;
const THRESHOLD = 9;
const FINAL = new Set(["intent.accepted", "intent.rejected", "intent.expired"]);

interface Sent {
  signer: number;
  decision: "approval" | "rejection";
  status: number;
  body: Json;
}

storeTest(
  "approvals, rejections and the expiry at once over two processes: one end, once",
  async (store) => {
    const h = await startProcess({ store });
    const other = await startServer({ kvPath: store.kvPath });
    const servers = [h, harnessFor(other)];
    const token = h.server.adminToken;
    try {
      // Rounds 0–3 decide well before the deadline, rounds 4 and 5 right at it.
      const ends: string[] = [];
      for (let round = 0; round < 6; round++) {
        const atDeadline = round >= 4;
        const signers = Array.from({ length: SIGNERS }, () => ed25519Signer());
        const window = atDeadline ? 2 : 3600;
        const policy = await addGoverned(
          h,
          "policy",
          authorizationOf(signers, THRESHOLD, { approval_window_s: window }),
        );
        const start = await feedEnd(h.url, token);
        const signed = newSigned("policy", policy) as Payload;
        const submitted = await h.submit(bodyOf(signed, await signers[0].sign(signed)));
        const record = await submitted.json();
        assert.equal(submitted.status, 202);

        // Signers 2..16 decide: a random half approves, the rest reject; four send twice.
        const sends: { signer: number; decision: Sent["decision"]; body: string }[] = [];
        for (let i = 1; i < SIGNERS; i++) {
          const decision = Math.random() < 0.5 ? "approval" : "rejection";
          const signature = decision === "approval"
            ? await signers[i].sign(signed)
            : await signers[i].reject(signed);
          const body = JSON.stringify({ signature });
          sends.push({ signer: i, decision, body });
          if (i % 4 === 0) sends.push({ signer: i, decision, body });
        }
        sends.sort(() => Math.random() - 0.5);
        // At the deadline: spread from 120 ms before it to 60 ms after, so that some decisions
        // are recorded, some find it expired, and the expiry's own commit races the rest.
        const deadline = Date.parse(record.approval.expires_at);
        const answers: Sent[] = await Promise.all(sends.map(async (send, k) => {
          if (atDeadline) await sleepUntil(deadline - 120 + 10 * k);
          const server = servers[k % 2];
          const post = send.decision === "approval" ? postApproval : postRejection;
          const response = await post(server, signed.id, send.body);
          return { ...send, status: response.status, body: await response.json() };
        }));
        // The expiry, when it ends the intent, is recorded within seconds of the deadline.
        const ended = await awaitEvent(
          h.url,
          token,
          start,
          (e) => e.record.id === signed.id && FINAL.has(e.type),
          atDeadline ? deadline + 8_000 - Date.now() : 5_000,
        );
        assert.ok(ended, "the intent ended");

        // One final event, and everyone reads the state it set.
        const life = (await readFeed(h.url, token, start)).filter((e) => e.record.id === signed.id);
        const finals = life.filter((e) => FINAL.has(e.type));
        assert.equal(finals.length, 1, life.map((e) => e.type).join(" "));
        assert.equal(life.at(-1), finals[0]);
        const state = finals[0].record.state;
        ends.push(state);
        assert.equal(finals[0].type, `intent.${state}`);
        const stored = await getRecord(h, signed.id);
        assert.equal(stored.state, state);
        assert.deepEqual(finals[0].record, stored);
        for (const server of servers) {
          assert.deepEqual(await (await getApprovals(server, signed.id)).json(), {
            id: signed.id,
            state,
          });
        }

        // Each decision counted at most once, in the lists of its kind, in feed order.
        const approval = stored.approval as { approvals: Json[]; rejections: Json[] };
        const approvedKeys = approval.approvals.map((a) => a.key as string);
        const rejectedKeys = approval.rejections.map((r) => r.key as string);
        assert.equal(
          new Set([...approvedKeys, ...rejectedKeys]).size,
          approvedKeys.length + rejectedKeys.length,
        );
        assert.equal(approvedKeys[0], signers[0].key);
        if (state === "accepted") assert.equal(approvedKeys.length, THRESHOLD);
        if (state === "rejected") assert.equal(rejectedKeys.length, SIGNERS - THRESHOLD + 1);
        // Between stored and final: one event per decision recorded, except the last one's.
        assert.equal(
          life.length,
          approvedKeys.length - 1 + rejectedKeys.length + 1 +
            (state === "expired" ? 1 : 0),
        );

        // A request is answered 200 exactly when its decision is in the record; else too late.
        for (const answer of answers) {
          const key = signers[answer.signer].key;
          const list = answer.decision === "approval" ? approvedKeys : rejectedKeys;
          if (list.includes(key)) {
            assert.equal(answer.status, 200, JSON.stringify(answer));
          } else {
            assert.equal(answer.status, 409, JSON.stringify(answer));
            assert.equal(answer.body.code, "not_pending");
          }
        }
      }
      console.log(`ends: ${ends.join(", ")}`);
    } finally {
      await other.stop();
      await h.server.stop();
    }
  },
);

storeTest("MAX_PENDING_PER_SIGNER holds exactly across two processes", async (store) => {
  const env = { MAX_PENDING_PER_SIGNER: "5" };
  const h = await startProcess({ store, env });
  const other = await startServer({ kvPath: store.kvPath, env });
  const servers = [h, harnessFor(other)];
  try {
    const [a, b] = [ed25519Signer(), ed25519Signer()];
    const policy = await addGoverned(h, "policy", authorizationOf([a, b], 2));
    const bodies = await Promise.all(Array.from({ length: 40 }, async () => {
      const signed = newSigned("policy", policy) as Payload;
      return { signed, body: bodyOf(signed, await a.sign(signed)) };
    }));
    const answers = await Promise.all(bodies.map(async ({ body }, k) => {
      const response = await servers[k % 2].submit(body);
      return { status: response.status, body: await response.json() };
    }));
    const tally = JSON.stringify(Object.groupBy(answers, (x) => String(x.status)), null, 0);
    assert.equal(answers.filter((x) => x.status === 202).length, 5, tally);
    for (const answer of answers.filter((x) => x.status !== 202)) {
      assert.equal(answer.status, 429, JSON.stringify(answer));
      assert.equal(answer.body.code, "too_many_pending");
    }
    const kv = await store.open();
    try {
      assert.equal(await pendingCountOf(kv, "policy", policy, a.key), 5);
    } finally {
      kv.close();
    }
  } finally {
    await other.stop();
    await h.server.stop();
  }
});
