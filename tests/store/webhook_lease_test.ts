/**
 * A held webhook lease (`src/delivery/lease.ts`) on an
 * in-memory KV: writes checked against the lease as it stands, renewals
 * that take turns with them, and a lease that is given up when taken over,
 * when it would run out without a renewal, and when released.
 */

import assert from "node:assert/strict";
import { HeldLease, LEASE_MARGIN_MS } from "../../src/delivery/lease.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { newEndpoint, newEndpointId } from "../../src/webhooks/endpoint.ts";
import type { WebhookStore } from "../../src/webhooks/store.ts";

async function withLease(
  fn: (webhooks: WebhookStore, lease: HeldLease, id: string) => Promise<void>,
  untilMs = 15_000,
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    const webhooks = new KvStore(kv).webhooks;
    const created = await webhooks.createEndpoint((head) =>
      newEndpoint({
        id: newEndpointId(),
        url: "https://hooks.example/in",
        events: null,
        description: "",
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        head,
        now: new Date(),
      }), 100);
    assert.notEqual(created, "too_many");
    const id = (created as { id: string }).id;
    const now = Date.now();
    const taken = await webhooks.takeLease({ id, holder: "a", now, until: now + untilMs });
    assert.ok(taken);
    const lease = new HeldLease(taken, webhooks, Date.now);
    try {
      await fn(webhooks, lease, id);
    } finally {
      lease.lose("test over");
    }
  } finally {
    kv.close();
  }
}

Deno.test("a write runs with the lease's version as it stands, after the renewal before it", async () => {
  await withLease(async (webhooks, lease, id) => {
    const first = lease.current.version;
    const renewing = lease.renew(Date.now() + 15_000);
    // Queued behind the renewal: it sees the renewed version, never the one the renewal replaced.
    const seen = await lease.run((version) => Promise.resolve(version));
    assert.equal(await renewing, true);
    assert.notEqual(seen, first);
    assert.equal(seen, lease.current.version);
    assert.equal((await webhooks.getLease(id))?.version, seen);
    assert.ok(lease.held);
  });
});

Deno.test("a lease taken over is given up at the next renewal: the signal aborts, writes stop", async () => {
  await withLease(async (webhooks, lease, id) => {
    // Another holder after the lease ran out (as the store sees it).
    const later = lease.current.until + 1;
    assert.ok(await webhooks.takeLease({ id, holder: "b", now: later, until: later + 15_000 }));
    assert.equal(await lease.renew(Date.now() + 15_000), false);
    assert.equal(lease.held, false);
    assert.ok(lease.signal.aborted);
    assert.equal(await lease.run(() => Promise.resolve("written")), null);
    assert.equal((await webhooks.getLease(id))?.holder, "b");
  });
});

Deno.test("a lease not renewed in time is given up a margin before it would run out", async () => {
  await withLease(async (_webhooks, lease) => {
    // Timed from the lease's end, not from here: taking it may have been slow.
    const givesUp = lease.current.until - LEASE_MARGIN_MS;
    if (!lease.signal.aborted) {
      await new Promise<void>((resolve) => lease.signal.addEventListener("abort", () => resolve()));
    }
    const after = Date.now() - givesUp;
    assert.ok(after >= -100 && after < 1_000, `given up ${after} ms after its time`);
    assert.equal(lease.held, false);
  }, LEASE_MARGIN_MS + 500);
});

Deno.test("a released lease is gone from the store, and its holder holds it no more", async () => {
  await withLease(async (webhooks, lease, id) => {
    await lease.release(true);
    assert.equal(lease.held, false);
    assert.equal(await webhooks.getLease(id), null);
  });
});
