/**
 * A rotation made through another handle of the KV file (as another process
 * makes it: nothing notifies the deliverer here) takes hold before its answer
 * (docs/interface.md §11): with `overlap_s` 0, no attempt that starts after
 * the 200 is signed with the older secret; with the default, the older one
 * signs beside the new one, newest first. Events flow all along, so the
 * deliverer works from what its own writes left, never reading the endpoint
 * unless its view grows old. A slow receiver holds an attempt past the 200:
 * the attempt after it, made while its acknowledgement commits, signs with
 * the new secret alone.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { WebhookDeliveries } from "../../src/delivery/deliveries.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { WEBHOOK_WORK } from "../../src/webhooks/store.ts";
import { withApp } from "../support/in_process.ts";
import { type Delivery, independentSignature, startReceiver } from "../support/webhooks.ts";
import { smallIntent } from "../support/store_kit.ts";
import { sleep, within } from "../support/time.ts";

/** The signatures a delivery carries, in order. */
function signatures(d: Delivery): string[] {
  return d.signature.split(" ");
}

Deno.test("a rotation elsewhere retires the older secret before its 200, or keeps it beside the new", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webhook-rotation-" });
  const path = join(dir, "intents.kv");
  const kv = await Deno.openKv(path);
  const here = new KvStore(kv);
  const receiver = startReceiver();
  const deliveries = new WebhookDeliveries({
    store: here,
    webhooks: here.webhooks,
    settings: {
      webhookTimeoutMs: 2_000,
      webhooksAllowPrivate: true,
      webhooksAllowHttp: true,
      webhookRetryScheduleMs: [200],
      denoDeploy: false,
    },
    report: () => {},
  });
  let feeding = true;
  let intervalMs = 10;
  const env = { WEBHOOKS_ALLOW_HTTP: "true", WEBHOOKS_ALLOW_PRIVATE: "true" };
  try {
    await withApp({ store: path, env, background: false }, async (elsewhere) => {
      await here.putDocument("template", "T", {
        contentType: "text/plain",
        bytes: new Uint8Array(1),
      });
      const ref = (await here.findDocument("template", "T"))!;
      const created = await elsewhere.client.webhooks.add({ url: receiver.url });
      deliveries.start();
      const [work] = await here.listDueWork({ kind: WEBHOOK_WORK, limit: 10 });
      assert.equal(await deliveries.claim(work), "done");
      // An event every `intervalMs` until the end.
      const feeder = (async () => {
        for (let i = 0; feeding; i++) {
          await here.insertIntents([{ intent: smallIntent(`i-${i}`, ref), ref }]);
          await sleep(intervalMs);
        }
      })();
      await receiver.until((d) => d.length >= 20, 10_000, "deliveries before the rotation");
      assert.ok(
        receiver.deliveries.every((d) => d.signature === independentSignature(created.secret, d)),
      );

      // Retired at once: the answer waits until no process signs with it.
      const started = performance.now();
      const leaked = await elsewhere.client.webhooks.rotateSecret(created.id, { overlapS: 0 });
      const answeredAt = Date.now();
      assert.ok(performance.now() - started >= 1_000, "the answer waits for every deliverer");
      const seen = receiver.deliveries.length;
      await receiver.until((d) => d.length >= seen + 20, 10_000, "deliveries after the rotation");
      // At most one attempt was on its way as the answer went out; every later one is new only.
      const after = receiver.deliveries.filter((d) => d.at > answeredAt).slice(1);
      assert.ok(after.length >= 10);
      for (const d of after) assert.deepEqual(signatures(d), [independentSignature(leaked, d)]);

      // The default overlap: the new secret and, after it, the one it replaces.
      const next = await elsewhere.client.webhooks.rotateSecret(created.id);
      const nextAt = Date.now();
      const later = (d: Delivery[]) => d.filter((x) => x.at > nextAt + 1_000);
      await receiver.until((d) => later(d).length >= 20, 10_000, "deliveries after the second");
      for (const d of later(receiver.deliveries)) {
        assert.deepEqual(signatures(d), [
          independentSignature(next, d),
          independentSignature(leaked, d),
        ]);
      }

      // Sparse events: the deliverer waits between them, and its view of the endpoint ages.
      intervalMs = 300;
      await sleep(1_500);
      const last = await elsewhere.client.webhooks.rotateSecret(created.id, { overlapS: 0 });
      const lastAt = Date.now();
      const sparse = (d: Delivery[]) => d.filter((x) => x.at > lastAt).slice(1);
      await receiver.until((d) => sparse(d).length >= 5, 10_000, "sparse deliveries");
      for (const d of sparse(receiver.deliveries)) {
        assert.deepEqual(signatures(d), [independentSignature(last, d)]);
      }
      feeding = false;
      await feeder;
    });
  } finally {
    feeding = false;
    await deliveries.stop();
    await receiver.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an attempt held past a rotation's 200 is followed by attempts signed with the new secret alone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webhook-rotation-" });
  const path = join(dir, "intents.kv");
  const kv = await Deno.openKv(path);
  const here = new KvStore(kv);
  const receiver = startReceiver();
  // Each attempt is held longer than a deliverer's view of the endpoint lasts (a second), and
  // longer than the rotation's answer takes.
  const holdMs = 1_800;
  const deliveries = new WebhookDeliveries({
    store: here,
    webhooks: here.webhooks,
    settings: {
      webhookTimeoutMs: 5_000,
      webhooksAllowPrivate: true,
      webhooksAllowHttp: true,
      webhookRetryScheduleMs: [200],
      denoDeploy: false,
    },
    report: () => {},
  });
  const env = { WEBHOOKS_ALLOW_HTTP: "true", WEBHOOKS_ALLOW_PRIVATE: "true" };
  try {
    await withApp({ store: path, env, background: false }, async (elsewhere) => {
      await here.putDocument("template", "T", {
        contentType: "text/plain",
        bytes: new Uint8Array(1),
      });
      const ref = (await here.findDocument("template", "T"))!;
      const created = await elsewhere.client.webhooks.add({ url: receiver.url });
      for (let i = 0; i < 8; i++) {
        await here.insertIntents([{ intent: smallIntent(`i-${i}`, ref), ref }]);
      }
      // The second attempt, while held, has the secret retired elsewhere; its answer comes
      // before the attempt is acknowledged.
      let arrivals = 0;
      let heldSince = 0;
      let rotation: Promise<{ secret: string; answeredAt: number }> | undefined;
      receiver.answer(() => {
        if (++arrivals === 2) {
          heldSince = Date.now();
          rotation = elsewhere.client.webhooks.rotateSecret(created.id, { overlapS: 0 })
            .then((secret) => ({ secret, answeredAt: Date.now() }));
        }
        return { status: 204, delayMs: holdMs };
      });
      // Deliveries are not started: no poll for changes made elsewhere (on a busy process it
      // may come late), so what holds rests on the deliverer's view of the endpoint alone.
      const [work] = await here.listDueWork({ kind: WEBHOOK_WORK, limit: 10 });
      assert.equal(await deliveries.claim(work), "done");
      await receiver.until(() => rotation !== undefined, 10_000, "the second attempt");
      const { secret, answeredAt } = await within(rotation!, 10_000, "the rotation");
      assert.ok(answeredAt < heldSince + holdMs, "the 200 came while the attempt was held");
      const later = (d: Delivery[]) => d.filter((x) => x.at > answeredAt);
      await receiver.until((d) => later(d).length >= 2, 15_000, "attempts after the rotation");
      for (const d of later(receiver.deliveries)) {
        assert.deepEqual(signatures(d), [independentSignature(secret, d)]);
      }
      assert.ok(
        receiver.deliveries.filter((d) => d.at < answeredAt)
          .every((d) => signatures(d).includes(independentSignature(created.secret, d))),
      );
    });
  } finally {
    await deliveries.stop({ graceMs: 0 });
    await receiver.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
