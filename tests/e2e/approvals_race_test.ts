/**
 * Concurrent approvals across processes (CONTRACT §10): a 16-of-16 quorum,
 * the intent submitted by signer 1 (202); then the other 15 signers, some of
 * them twice, and signer 1 again, approve all at once through two server
 * processes sharing one store (a KV file, or denokv over KV Connect). Every
 * distinct approval is counted, none lost; exactly one answer says accepted;
 * a repeat is 409 `already_approved`, or `not_pending` once the intent is
 * accepted; the feed holds the intent's life once, in an order consistent
 * with its approvals.
 */

import assert from "node:assert/strict";
import { startServer } from "../support/server.ts";
import { harnessFor, startProcess } from "../support/process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  feedEnd,
  type FeedEvent,
  getRecord,
  newSigned,
  postApproval,
  readFeed,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";

const SIGNERS = 16;
const ROUNDS = 4;

interface Answer {
  signer: number;
  status: number;
  body: Json & { code?: string; state?: string; approval?: { weight: number; approvals: Json[] } };
}

storeTest("16 approvals at once over two processes: all counted, one acceptance", async (store) => {
  const h = await startProcess({ store });
  const other = await startServer({ kvPath: store.kvPath });
  const servers = [h, harnessFor(other)];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const signers = Array.from({ length: SIGNERS }, () => ed25519Signer());
      const policy = await addGoverned(h, "policy", authorizationOf(signers, SIGNERS));
      const start = await feedEnd(h.url, h.server.adminToken);
      const signed = newSigned("policy", policy);
      const submitted = await h.submit(bodyOf(signed, await signers[0].sign(signed)));
      assert.equal(submitted.status, 202);
      await submitted.body?.cancel();

      // Signers 2..16 once each, five of them twice (on the other process), and signer 1.
      const repeated = new Set<number>();
      while (repeated.size < 5) repeated.add(1 + Math.floor(Math.random() * (SIGNERS - 1)));
      const sends: { signer: number; server: number; body: string }[] = [];
      for (let i = 1; i < SIGNERS; i++) {
        const body = JSON.stringify({ signature: await signers[i].sign(signed) });
        sends.push({ signer: i, server: i % 2, body });
        if (repeated.has(i)) sends.push({ signer: i, server: (i + 1) % 2, body });
      }
      const first = JSON.stringify({ signature: await signers[0].sign(signed) });
      sends.push({ signer: 0, server: 0, body: first }, { signer: 0, server: 1, body: first });
      sends.sort(() => Math.random() - 0.5);
      const answers: Answer[] = await Promise.all(sends.map(async ({ signer, server, body }) => {
        const response = await postApproval(servers[server], signed.id, body);
        return { signer, status: response.status, body: await response.json() };
      }));

      const record = await getRecord(h, signed.id);
      assert.equal(record.state, "accepted");
      const approval = record.approval as { weight: number; approvals: { key: string }[] };
      const order = approval.approvals.map((a) => a.key);
      // Every distinct approval counted: sixteen keys, signer 1's first.
      assert.equal(approval.weight, SIGNERS);
      assert.equal(new Set(order).size, SIGNERS);
      assert.deepEqual(new Set(order), new Set(signers.map((s) => s.key)));
      assert.equal(order[0], signers[0].key);

      const ok = answers.filter((a) => a.status === 200);
      for (let i = 1; i < SIGNERS; i++) {
        assert.equal(ok.filter((a) => a.signer === i).length, 1, `signer ${i + 1}: one 200`);
      }
      assert.equal(ok.length, SIGNERS - 1);
      const acceptances = ok.filter((a) => a.body.state === "accepted");
      assert.equal(acceptances.length, 1, "exactly one answer says accepted");
      assert.deepEqual(acceptances[0].body, { id: signed.id, state: "accepted" });
      // The others saw the intent pending, each after its own commit: weights 2..15, once each,
      // and the approvals so far are the start of the final order.
      const pending = ok.filter((a) => a.body.state === "pending");
      const weights = pending.map((a) => a.body.approval!.weight).sort((x, y) => x - y);
      assert.deepEqual(weights, Array.from({ length: SIGNERS - 2 }, (_, k) => k + 2));
      for (const { body } of pending) {
        const keys = body.approval!.approvals.map((a) => a.key);
        assert.deepEqual(keys, order.slice(0, keys.length));
      }
      // Repeats: already approved, or too late once accepted.
      for (const answer of answers.filter((a) => a.status !== 200)) {
        assert.equal(answer.status, 409, JSON.stringify(answer));
        assert.ok(
          answer.body.code === "already_approved" || answer.body.code === "not_pending",
          JSON.stringify(answer),
        );
      }
      assert.equal(answers.length - ok.length, repeated.size + 2);

      // After the acceptance nothing but 409 not_pending, on either process.
      for (const server of servers) {
        for (const signer of [signers[0], signers[SIGNERS - 1], signers[7]]) {
          const response = await postApproval(server, signed.id, {
            signature: await signer.sign(signed),
          });
          assert.equal(response.status, 409);
          assert.equal((await response.json()).code, "not_pending");
        }
      }

      // The feed, read through either process: pending, fourteen approvals, one acceptance.
      const lives: FeedEvent[][] = [];
      for (const server of servers) {
        const events = await readFeed(server.url, h.server.adminToken, start);
        lives.push(events.filter((e) => e.record.id === signed.id));
      }
      assert.deepEqual(lives[0], lives[1]);
      const life = lives[0];
      assert.deepEqual(
        life.map((e) => e.type),
        [
          "intent.pending",
          ...Array(SIGNERS - 2).fill("intent.approval_added"),
          "intent.accepted",
        ],
      );
      life.forEach((event, k) => {
        const eventApproval = event.record.approval as { weight: number; approvals: Json[] };
        assert.equal(eventApproval.weight, k + 1);
        assert.deepEqual(eventApproval.approvals, approval.approvals.slice(0, k + 1));
        assert.equal(event.record.state, k === SIGNERS - 1 ? "accepted" : "pending");
      });
      assert.deepEqual(life[SIGNERS - 1].record, record);
    }
  } finally {
    await other.stop();
    await h.server.stop();
  }
});
