/**
 * The feed carries the whole life of a governed intent (docs/interface.md §9, §10):
 * `intent.pending`, then `intent.approval_added` for each approval that did
 * not complete it, then `intent.accepted` (exactly once) or `intent.expired`,
 * in the one order every reader sees, each event's record as it stood after
 * that change (weights growing). Several intents' lives interleave with an
 * ungoverned one's; the stream form names each type on its `event:` line.
 * On a KV file and over KV Connect.
 */

import assert from "node:assert/strict";
import { multisigSignature, signVariantB } from "../../client/mod.ts";
import { newIntent } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withProcess } from "../support/process.ts";
import {
  addGoverned,
  approve,
  authorizationOf,
  awaitEvent,
  bodyOf,
  type DocKind,
  ed25519Signer,
  feedEnd,
  type FeedEvent,
  getRecord,
  newSigned,
  passkeySigner,
  readFeed,
  type Signer,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { openSse } from "../../testing/sse.ts";
import { storeTest } from "../support/stores.ts";

/** What the test knows of one intent: its answers, in order, to compare with its events. */
interface Life {
  id: string;
  /** The record answered at submission, then the `approval` of each pending view. */
  submitted: Json;
  approvals: Json[];
  end: "intent.accepted" | "intent.expired" | "pending";
}

async function submitGoverned(
  h: Harness,
  kind: DocKind,
  doc: string,
  by: Signer,
): Promise<{ signed: ReturnType<typeof newSigned>; life: Life }> {
  const signed = newSigned(kind, doc);
  const response = await h.submit(bodyOf(signed, await by.sign(signed)));
  const record = await response.json();
  assert.equal(response.status, 202, JSON.stringify(record));
  return { signed, life: { id: record.id, submitted: record, approvals: [], end: "pending" } };
}

storeTest("the feed holds each governed intent's life in order, as it stood", async (store) => {
  await withProcess({ store }, async (h) => {
    const token = h.server.adminToken;
    const e = ed25519Signer();
    const [p1, p2] = [await passkeySigner(), await passkeySigner({ compressed: true })];
    const authorization = authorizationOf([e, p1, p2], 4, { weights: [1, 2, 2] });
    const policy = await addGoverned(h, "policy", authorization);
    const template = await addGoverned(h, "template", authorization);
    const shortPolicy = await addGoverned(h, "policy", { ...authorization, approval_window_s: 1 });
    const plainPolicy = await h.newPolicy();
    const start = await feedEnd(h.url, token);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (start !== null) headers["last-event-id"] = start;
    const stream = await openSse(`${h.url}/events`, headers);

    // Lives that interleave: X accepted by approvals, Z expired after one, W accepted,
    // Y accepted at its submission, and an ungoverned intent among them.
    const x = await submitGoverned(h, "policy", policy, e);
    const z = await submitGoverned(h, "policy", shortPolicy, p1);
    const w = await submitGoverned(h, "template", template, p2);
    const plain = signVariantB(newIntent(plainPolicy), e.pair);
    assert.equal((await h.submit(plain)).status, 201);
    const ySigned = newSigned("template", template);
    const signatures = [await p1.sign(ySigned), await p2.sign(ySigned)];
    const multisig = multisigSignature({
      signers: authorization.signers as Record<string, number>,
      threshold: 4,
      signatures,
    });
    const yAnswer = await h.submit(bodyOf(ySigned, multisig));
    assert.equal(yAnswer.status, 201);
    const y: Life = {
      id: ySigned.id,
      submitted: await yAnswer.json(),
      approvals: [],
      end: "intent.accepted",
    };

    const step = async (of: { signed: ReturnType<typeof newSigned>; life: Life }, by: Signer) => {
      const view = await approve(h, of.life.id, of.signed, by);
      if (view.state === "pending") of.life.approvals.push(view.approval as Json);
      else of.life.end = "intent.accepted";
    };
    await step(z, e);
    await step(x, p1);
    await step(w, e);
    await step(x, p2);
    await step(w, p1);
    z.life.end = "intent.expired";
    assert.equal(x.life.end, "intent.accepted");
    assert.equal(w.life.end, "intent.accepted");

    const deadline = Date.parse((z.life.submitted.approval as Json).expires_at as string);
    const expired = await awaitEvent(
      h.url,
      token,
      start,
      (event) => event.record.id === z.life.id && event.type === "intent.expired",
      deadline + 15_000 - Date.now(),
    );
    assert.ok(expired, "no intent.expired event");

    const feed = await readFeed(h.url, token, start);
    const lives = [x.life, z.life, w.life, y];
    assert.equal(feed.length, 3 + 3 + 3 + 1 + 1);
    for (const life of lives) checkLife(life, feed.filter((ev) => ev.record.id === life.id));
    const ungoverned = feed.filter((ev) => ev.record.id === plain.intent.id);
    assert.deepEqual(ungoverned.map((ev) => ev.type), ["intent.accepted"]);
    assert.ok(!("approval" in ungoverned[0].record));
    // Each intent's last event is its record as GET /intents/{id} renders it now.
    for (const life of lives) {
      const last = feed.findLast((ev) => ev.record.id === life.id)!;
      assert.deepEqual(last.record, await getRecord(h, life.id));
    }

    // The stream gives the same events in the same order, its event: line the type.
    const streamed: FeedEvent[] = [];
    for await (const item of stream.items) {
      if (item.kind !== "event") continue;
      streamed.push({ id: item.id!, type: item.event, record: JSON.parse(item.data) });
      if (streamed.length === feed.length) break;
    }
    stream.close();
    assert.deepEqual(streamed, feed);
  });
});

/**
 * Checks one governed intent's events: the types in order, and each record as
 * it stood: the submission's record, then each approval's, then the end.
 */
function checkLife(life: Life, events: FeedEvent[]): void {
  const submitted = life.submitted as Json & { approval: Json & { weight: number } };
  const types = events.map((ev) => ev.type);
  if (submitted.state === "accepted") {
    assert.deepEqual(types, ["intent.accepted"]);
    assert.deepEqual(events[0].record, submitted);
    return;
  }
  assert.deepEqual(types, [
    "intent.pending",
    ...life.approvals.map(() => "intent.approval_added"),
    life.end,
  ]);
  assert.deepEqual(events[0].record, submitted);
  life.approvals.forEach((approval, k) => {
    assert.deepEqual(events[k + 1].record, { ...submitted, approval });
  });
  let weight = 0;
  events.forEach((ev, k) => {
    const approval = ev.record.approval!;
    // Weights grow with each approval; an expiry changes nothing but the state.
    if (ev.type === "intent.expired") assert.equal(approval.weight, weight);
    else assert.ok(approval.weight > weight, `event ${k}: weight ${approval.weight}`);
    weight = approval.weight;
    const approvals = approval.approvals as Json[];
    const final = events[events.length - 1].record.approval!.approvals as Json[];
    assert.deepEqual(approvals, final.slice(0, approvals.length));
    assert.equal(ev.record.received_at, submitted.received_at);
    assert.deepEqual(ev.record.authorship, submitted.authorship);
  });
  const end = events[events.length - 1].record;
  assert.equal(end.state, life.end === "intent.accepted" ? "accepted" : "expired");
  if (life.end === "intent.accepted") assert.ok(end.approval!.weight >= 4);
  else assert.ok(end.approval!.weight < 4);
}
