/**
 * Webhook delivery (docs/interface.md §11) from a real server to real receivers, on a
 * KV file and over KV Connect: every event of an endpoint's types, in the
 * feed's order, none skipped, each within 3 s of its 201, while submissions
 * arrive concurrently; bodies exactly as the pull form gives them; the
 * Standard Webhooks headers, checked by the client's `verifyWebhook` and by
 * an independent HMAC; an HTTPS receiver reached by name, its certificate
 * checked; both secrets signing after a rotation, newest first, each
 * accepted by the Standard Webhooks reference library too.
 */

import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { generateEd25519Key, signVariantA, verifyWebhook } from "../../client/mod.ts";
import { newPayload } from "../support/fixtures.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
  readFeed,
} from "../support/governed.ts";
import type { ProcessHarness } from "../support/process.ts";
import { withProcess } from "../support/process.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { storeTest } from "../support/stores.ts";
import { RECORD_SKIPS_MS } from "../../src/delivery/deliverer.ts";
import {
  acknowledged,
  HAS_OPENSSL,
  independentSignature,
  LOCAL_WEBHOOKS,
  makeCertificates,
  settled,
  startReceiver,
} from "../support/webhooks.ts";

/** The exact text of each event after `after` in the pull form, by id. */
async function pullTexts(h: ProcessHarness, after: string | null): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const event of await readFeed(h.url, h.adminToken, after)) {
    const response = await h.fetch(
      `/events?limit=1${
        after === null && event.id === "1" ? "" : `&after=${Number(event.id) - 1}`
      }`,
      { headers: { authorization: h.auth } },
    );
    const text = await response.text();
    texts.set(event.id, text.slice('{"events":['.length, text.lastIndexOf('],"next":')));
  }
  return texts;
}

/** Submits `plain` accepted and `pending` governed intents, `concurrency` at a time; when each was answered. */
async function submitMixed(
  h: ProcessHarness,
  options: { plain: number; pending: number; concurrency: number },
): Promise<Map<string, number>> {
  const template = await h.newTemplate();
  const [e1, e2] = [ed25519Signer(), ed25519Signer()];
  const policy = await addGoverned(h, "policy", authorizationOf([e1, e2], 2));
  const key = generateEd25519Key();
  const bodies: unknown[] = [];
  const total = options.plain + options.pending;
  for (let i = 0; i < total; i++) {
    // Every so often a governed intent, stored pending: the feed mixes types.
    if (i % Math.ceil(total / options.pending) === 0) {
      const signed = newSigned("policy", policy);
      bodies.push(bodyOf(signed, await e1.sign(signed)));
    } else {
      bodies.push(signVariantA(newPayload(template), key));
    }
  }
  const answered = new Map<string, number>();
  let next = 0;
  await Promise.all(Array.from({ length: options.concurrency }, async () => {
    while (next < bodies.length) {
      const response = await h.submit(bodies[next++]);
      const record = await response.json();
      assert.ok(response.status === 201 || response.status === 202, JSON.stringify(record));
      answered.set(record.id, Date.now());
    }
  }));
  return answered;
}

storeTest(
  "endpoints get every event of their types in the feed's order, each within 3 s of its 201, under load",
  async (store) => {
    const all = startReceiver();
    const typed = startReceiver();
    try {
      await withProcess({ store, env: LOCAL_WEBHOOKS }, async (h) => {
        // Something in the feed before: the endpoints start after it.
        await submitMixed(h, { plain: 3, pending: 1, concurrency: 1 });
        const everything = await h.client.webhooks.add({ url: all.url });
        const accepted = await h.client.webhooks.add({
          url: typed.url,
          events: ["intent.accepted"],
        });
        assert.equal(everything.after, "4");
        const answered = await submitMixed(h, { plain: 240, pending: 60, concurrency: 16 });
        const feed = await readFeed(h.url, h.adminToken, everything.after);
        assert.equal(feed.length, 300);
        await all.until((d) => acknowledged(d).length >= feed.length, 30_000, "every event");
        const wanted = feed.filter((e) => e.type === "intent.accepted");
        await typed.until(
          (d) => acknowledged(d).length >= wanted.length,
          30_000,
          "accepted events",
        );

        // In the feed's order, none skipped, none repeated (a healthy receiver needs no retry).
        assert.deepEqual(acknowledged(all.deliveries), feed.map((e) => Number(e.id)));
        assert.deepEqual(acknowledged(typed.deliveries), wanted.map((e) => Number(e.id)));
        assert.equal(all.maxInFlight, 1, "one at a time");
        assert.ok(feed.some((e) => e.type === "intent.pending"));

        // Each body is the pull form's event, byte for byte, on one line.
        const texts = await pullTexts(h, everything.after);
        for (const d of all.deliveries) {
          assert.equal(d.body, texts.get(d.id), `event ${d.id}`);
          assert.ok(!d.body.includes("\n"));
          assert.equal(d.contentType, "application/json");
          assert.equal(d.path, "/hook");
        }

        // Within 3 s of its 201 (or 202): from the answer to the delivery's arrival.
        const delays = all.deliveries.map((d) => d.at - answered.get(d.event.record.id as string)!);
        delays.sort((a, b) => a - b);
        const p = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))];
        console.log(`201 → delivery: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`);
        assert.ok(p(1) <= 3_000, `an event reached its endpoint ${p(1)} ms after its 201`);

        // Signed with each endpoint's secret, checked two ways.
        for (
          const [receiver, secret] of [[all, everything.secret], [typed, accepted.secret]] as const
        ) {
          for (const d of receiver.deliveries) {
            assert.equal(d.signature, independentSignature(secret, d));
            const verified = await verifyWebhook(secret, { ...headersOf(d) }, d.body);
            assert.equal(verified.id, d.id);
          }
        }

        // Caught up: nothing left, both endpoints' cursors at the head.
        const last = feed.at(-1)!.id;
        const shown = await settled(h.client, everything.id, (e) => e.after === last);
        assert.deepEqual([shown.next_event, shown.lag], [null, 0]);
        // The endpoint of one type moves past the events of others too: its lag falls to 0, once
        // that move is recorded (within RECORD_SKIPS_MS of the first event it passed).
        const typedShown = await settled(
          h.client,
          accepted.id,
          (e) => e.after === last,
          RECORD_SKIPS_MS + 3_000,
        );
        assert.equal(typedShown.last_attempt?.event_id, wanted.at(-1)!.id);
        assert.equal(typedShown.lag, 0);
        const samples = await scrape(h);
        const acks = { outcome: "acknowledged" };
        assert.equal(
          sampleValue(samples, "intents_webhook_deliveries_total", acks),
          feed.length + wanted.length,
        );
        assert.equal(sampleValue(samples, "intents_webhook_endpoints", { status: "active" }), 2);
        assert.equal(sampleValue(samples, "intents_webhook_leases_held", {}), 2);
        assert.equal(
          sampleValue(samples, "intents_webhook_attempt_duration_seconds_count", {}),
          feed.length + wanted.length,
        );
      });
    } finally {
      await all.close();
      await typed.close();
    }
  },
);

function headersOf(d: { id: string; timestamp: string; signature: string }) {
  return {
    "webhook-id": d.id,
    "webhook-timestamp": d.timestamp,
    "webhook-signature": d.signature,
  };
}

Deno.test({
  name:
    "an HTTPS receiver reached by name gets deliveries signed with both secrets after a rotation",
  ignore: !HAS_OPENSSL,
  async fn() {
    const certs = await makeCertificates("localhost");
    const receiver = startReceiver({ tls: { cert: certs.cert, key: certs.key } });
    // The service trusts the test authority the way an operator adds one: DENO_CERT.
    const env = { ...LOCAL_WEBHOOKS, WEBHOOKS_ALLOW_HTTP: "false", DENO_CERT: certs.caFile };
    try {
      await withProcess({ env }, async (h) => {
        const endpoint = await h.client.webhooks.add({ url: receiver.url });
        assert.match(endpoint.url, /^https:\/\/localhost:\d+\/hook$/);
        const template = await h.newTemplate();
        const key = generateEd25519Key();
        const submit = async () => {
          const response = await h.submit(signVariantA(newPayload(template), key));
          assert.equal(response.status, 201);
          await response.body?.cancel();
        };
        await submit();
        await receiver.until((d) => d.length === 1, 5_000, "the first delivery over TLS");
        const first = receiver.deliveries[0];
        assert.equal(first.signature.split(" ").length, 1);
        assert.equal(first.signature, independentSignature(endpoint.secret, first));
        const sent = Number(first.timestamp);
        assert.ok(Math.abs(sent - first.at / 1000) < 5, "webhook-timestamp is the attempt's time");

        const newer = await h.client.webhooks.rotateSecret(endpoint.id);
        await submit();
        // The first may come again (at least once: its acknowledgement's commit can meet the
        // rotation's change of the endpoint); the second event's delivery is the one to read.
        const isSecond = (d: { id: string }) => d.id !== first.id;
        await receiver.until((d) => d.some(isSecond), 5_000, "the delivery after the rotation");
        const second = receiver.deliveries.find(isSecond)!;
        // One v1 signature per secret in force, newest first, separated by one space.
        assert.deepEqual(second.signature.split(" "), [
          independentSignature(newer, second),
          independentSignature(endpoint.secret, second),
        ]);
        for (const secret of [newer, endpoint.secret]) {
          const verified = await verifyWebhook(secret, headersOf(second), second.body);
          assert.equal(verified.payload.id, second.id);
          // The specification's own library takes the secret as the service gave it.
          const library = new Webhook(secret).verify(second.body, headersOf(second));
          assert.deepEqual(library, JSON.parse(second.body));
        }
        assert.throws(() =>
          new Webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verify(
            second.body,
            headersOf(second),
          )
        );
        await assert.rejects(
          verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headersOf(second), second.body),
          { code: "no_matching_signature" },
        );
      });
    } finally {
      await receiver.close();
      await Deno.remove(certs.dir, { recursive: true });
    }
  },
});
