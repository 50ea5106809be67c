/**
 * The feed pushed from two server processes sharing one store (docs/interface.md
 * §11): 2,000 intents submitted through both reach one endpoint exactly as
 * the feed has them, in its order, once each, every delivery verified by the
 * Standard Webhooks reference library and by the client's `verifyWebhook`.
 */

import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { generateEd25519Key, signVariantA, verifyWebhook } from "../../client/mod.ts";
import { newPayload } from "../support/fixtures.ts";
import { readFeed } from "../support/governed.ts";
import { type ProcessHarness, startProcess } from "../support/process.ts";
import { storeTest } from "../support/stores.ts";
import { acknowledged, LOCAL_WEBHOOKS, startReceiver } from "../support/webhooks.ts";

const TOTAL = 2_000;

/** Submits `n` intents through `h` under `template`, `concurrency` at a time. */
async function submit(h: ProcessHarness, template: string, n: number, concurrency: number) {
  const key = generateEd25519Key();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      next++;
      const response = await h.submit(signVariantA(newPayload(template), key));
      assert.equal(response.status, 201);
      await response.body?.cancel();
    }
  }));
}

storeTest(
  "2,000 events submitted through two processes reach one endpoint exactly as the feed has them",
  async (store) => {
    const receiver = startReceiver();
    const a = await startProcess({ store, env: LOCAL_WEBHOOKS });
    const b = await startProcess({ store, env: LOCAL_WEBHOOKS });
    try {
      const endpoint = await a.client.webhooks.add({ url: receiver.url });
      const template = await a.newTemplate();
      await Promise.all([submit(a, template, TOTAL / 2, 8), submit(b, template, TOTAL / 2, 8)]);
      const feed = await readFeed(a.url, a.adminToken, endpoint.after);
      assert.equal(feed.length, TOTAL);
      await receiver.until((d) => acknowledged(d).length >= TOTAL, 60_000, "every event");

      // Exactly the feed: its order, every event once (a healthy receiver needs no repeat).
      assert.deepEqual(receiver.deliveries.map((d) => d.id), feed.map((e) => e.id));
      assert.equal(receiver.maxInFlight, 1, "one at a time, across both processes");
      const library = new Webhook(endpoint.secret);
      for (const [i, d] of receiver.deliveries.entries()) {
        const headers = {
          "webhook-id": d.id,
          "webhook-timestamp": d.timestamp,
          "webhook-signature": d.signature,
        };
        assert.deepEqual(library.verify(d.body, headers), JSON.parse(d.body));
        const verified = await verifyWebhook(endpoint.secret, headers, d.body);
        assert.equal(verified.id, feed[i].id);
        assert.equal(verified.payload.record.id, feed[i].record.id);
      }
    } finally {
      await a.server.stop({ kill: true });
      await b.server.stop({ kill: true });
      await receiver.close();
    }
  },
);
