/**
 * A deliverer against a change made through another handle of its KV file
 * (as another process makes it, with no notification here): the endpoint is
 * paused while acknowledgements are committing behind the next attempts, and
 * the deliverer stops within the attempt already under way, records nothing
 * after the pause, and never waits for the change poll to notice.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { WebhookDeliveries } from "../../src/delivery/deliveries.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { type Endpoint, newEndpoint, newEndpointId } from "../../src/webhooks/endpoint.ts";
import { WEBHOOK_WORK } from "../../src/webhooks/store.ts";
import { smallIntent } from "../support/store_kit.ts";
import { sleep } from "../support/time.ts";

Deno.test("a pause made elsewhere while acknowledgements commit stops the deliverer at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "webhook-worker-" });
  const path = join(dir, "intents.kv");
  const [kvA, kvB] = [await Deno.openKv(path), await Deno.openKv(path)];
  const [here, elsewhere] = [new KvStore(kvA), new KvStore(kvB)];
  const arrived: number[] = [];
  let pausedAfter = 0;
  let endpointId = "";
  const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const event = await req.json();
    arrived.push(Number(event.id));
    if (arrived.length === 10) {
      // The pause lands before this answer: the acknowledgement's commit must fail.
      await elsewhere.webhooks.changeEndpoint(endpointId, (e) => ({ ...e, status: "paused" }));
      pausedAfter = arrived.length;
    }
    return new Response(null, { status: 204 });
  });
  const deliveries = new WebhookDeliveries({
    store: here,
    webhooks: here.webhooks,
    settings: {
      webhookTimeoutMs: 2_000,
      webhooksAllowPrivate: true,
      webhooksAllowHttp: true,
      webhookRetryScheduleMs: [1_000],
      denoDeploy: false,
    },
    report: () => {},
  });
  try {
    await here.putDocument("template", "T", {
      contentType: "text/plain",
      bytes: new Uint8Array(1),
    });
    const ref = (await here.findDocument("template", "T"))!;
    const created = await elsewhere.webhooks.createEndpoint((head) =>
      newEndpoint({
        id: newEndpointId(),
        url: `http://127.0.0.1:${receiver.addr.port}/hook`,
        events: null,
        description: "",
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        head,
        now: new Date(),
      }), 100);
    endpointId = (created as Endpoint).id;
    for (let i = 0; i < 10; i++) {
      await here.insertIntents(
        Array.from({ length: 50 }, (_, k) => ({ intent: smallIntent(`i-${i}-${k}`, ref), ref })),
      );
    }
    deliveries.start();
    const [work] = await here.listDueWork({ kind: WEBHOOK_WORK, limit: 10 });
    assert.equal(await deliveries.claim(work), "done");
    for (let i = 0; pausedAfter === 0; i++) {
      assert.ok(i < 200, "the tenth event did not arrive");
      await sleep(25);
    }
    // Well within the change poll (1 s): only the attempt already under way may follow.
    await sleep(400);
    assert.ok(
      arrived.length <= pausedAfter + 1,
      `${arrived.length - pausedAfter} deliveries after the pause`,
    );
    assert.deepEqual(arrived.slice(0, 10), Array.from({ length: 10 }, (_, i) => i + 1));
    const stored = (await here.webhooks.getEndpoint(endpointId))!.endpoint;
    assert.equal(stored.status, "paused");
    assert.ok(stored.position <= 9, `recorded up to ${stored.position}: past the pause`);
  } finally {
    await deliveries.stop();
    await receiver.shutdown();
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});
