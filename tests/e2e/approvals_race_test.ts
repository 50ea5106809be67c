/**
 * Concurrent approvals across processes (docs/interface.md §10): a 16-of-16 quorum,
 * the intent submitted by signer 1 (202); then the other 15 signers, some of
 * them sending the same approval twice, and signer 1 its submission's
 * signature again, approve all at once through two server processes sharing
 * one store (a KV file, or denokv over KV Connect). Every distinct approval
 * is counted once, none lost; every request is answered 200 (a repeat with
 * the view as it stands); the feed holds the intent's life once, one
 * acceptance, in an order consistent with its approvals; afterwards a new
 * approval is 409 `not_pending`.
 */

import assert from "node:assert/strict";
import { signedBytes } from "../../client/mod.ts";
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

      // Every request, first or repeat, learns that its approval counted.
      for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer));
      const accepted = answers.filter((a) => a.body.state === "accepted");
      assert.ok(accepted.length >= 1, "an answer says accepted");
      for (const answer of accepted) {
        assert.deepEqual(answer.body, { id: signed.id, state: "accepted" });
      }
      // Those that saw it pending saw it after a commit: the approvals so far are the start of the
      // final order, and every weight from 2 to 15 was seen by the approval that made it.
      const pending = answers.filter((a) => a.body.state === "pending");
      const weights = new Set(pending.map((a) => a.body.approval!.weight));
      for (let w = 2; w < SIGNERS; w++) assert.ok(weights.has(w), `weight ${w} seen`);
      for (const { body } of pending) {
        const keys = body.approval!.approvals.map((a) => a.key);
        assert.deepEqual(keys, order.slice(0, keys.length));
      }

      // After the acceptance a new approval is 409 not_pending on either process; a recorded
      // one sent again is the view as it stands.
      for (const server of servers) {
        for (const signer of [signers[0], signers[SIGNERS - 1], signers[7]]) {
          const fresh = await signer.signBytesAgain(signedBytes(signed));
          const response = await postApproval(server, signed.id, { signature: fresh });
          assert.equal(response.status, 409);
          assert.equal((await response.json()).code, "not_pending");
          const again = await postApproval(server, signed.id, {
            signature: await signer.sign(signed),
          });
          assert.deepEqual(await again.json(), { id: signed.id, state: "accepted" });
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
