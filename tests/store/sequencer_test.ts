/**
 * The staged layout's sequencer on real KV files: staged events enter the
 * feed in the order their commits were made, once each, with dense
 * positions, whoever moves them and however many move at once; what waits
 * too long is moved by any reader; a stopping process moves what it staged.
 */

import assert from "node:assert/strict";
import { KvStore } from "../../src/storage/kv_store.ts";
import { Sequencer, STALE_MS, WATCH_MS } from "../../src/storage/sequencer.ts";
import { Feed } from "../../src/storage/feed.ts";
import { encodeStaged, type StoredEvent } from "../../src/storage/codec.ts";
import { keys } from "../../src/storage/keys.ts";
import { decodeFeedHead } from "../../src/storage/index_codec.ts";
import { encodeLease } from "../../src/storage/values_codec.ts";
import { fenceHead } from "../../src/storage/fence.ts";
import { retryWhileLocked } from "../../src/storage/retry.ts";
import { auditIntents } from "../support/audit.ts";
import { plainTemplate, smallIntent, withKvFile } from "../support/store_kit.ts";
import { sleep } from "../support/time.ts";

const withFile = (fn: (path: string) => Promise<void>) => withKvFile("sequencer-test-", fn);

/** An event as a request's commit stages it. */
function staged(id: string, at = "2026-01-01T00:00:00.000Z"): StoredEvent {
  return {
    type: "intent.accepted",
    intent: {
      id,
      variant: "A",
      refId: "T",
      authorship: { kind: "Unsigned", signers: [] },
      body: new TextEncoder().encode(`"${id}"`),
      receivedAt: at,
      state: "accepted",
    },
    first: true,
  };
}

/** Stages events as a request's commit does, without telling any sequencer; their versionstamp. */
async function stage(kv: Deno.Kv, events: StoredEvent[], atMs = Date.now()): Promise<string> {
  const op = kv.atomic();
  for (const event of events) op.set(keys.intent(event.intent.id), new Uint8Array([1]));
  op.set(keys.staged(kv.commitVersionstamp()), encodeStaged(events, atMs));
  const result = await retryWhileLocked(() => op.commit());
  assert.ok(result.ok);
  return result.versionstamp;
}

async function feedIds(kv: Deno.Kv): Promise<string[]> {
  const feed = new Feed(kv);
  return (await feed.readEvents({ after: 0, limit: 10_000 })).map((e) => e.intent.id);
}

Deno.test("staged commits enter the feed in the order they were made, with dense positions", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      await fenceHead(kv);
      const ids: string[] = [];
      for (let c = 0; c < 30; c++) {
        const events = Array.from({ length: 1 + (c % 4) }, (_, k) => staged(`c${c}-${k}`));
        await stage(kv, events);
        ids.push(...events.map((e) => e.intent.id));
      }
      const sequencer = new Sequencer({
        kv,
        feed: new Feed(kv),
        commit: retryWhileLocked,
        now: () => new Date(),
      });
      await sequencer.moveStale({ all: true });
      const events = await new Feed(kv).readEvents({ after: 0, limit: 1000 });
      assert.deepEqual(events.map((e) => e.intent.id), ids);
      assert.deepEqual(events.map((e) => e.position), ids.map((_, i) => i + 1));
      // Every staged block is in the feed: the head names the last.
      const blocks = await Array.fromAsync(kv.list({ prefix: keys.stagedPrefix }));
      const head = decodeFeedHead((await kv.get(keys.feedHead)).value);
      assert.equal(head.through, blocks.at(-1)!.key[1]);
      assert.equal(head.position, ids.length);
    } finally {
      kv.close();
    }
  });
});

Deno.test("movers on two handles at once move each staged event once, none skipped", async () => {
  await withFile(async (path) => {
    const [kvA, kvB, kvW] = [
      await Deno.openKv(path),
      await Deno.openKv(path),
      await Deno.openKv(path),
    ];
    try {
      await fenceHead(kvW);
      const movers = [kvA, kvB].map((kv) =>
        new Sequencer({ kv, feed: new Feed(kv), commit: retryWhileLocked, now: () => new Date() })
      );
      const ids: string[] = [];
      // A writer stages while both move, each ignoring the other's lease.
      const writing = (async () => {
        for (let c = 0; c < 200; c++) {
          await stage(kvW, [staged(`w${c}`)]);
          ids.push(`w${c}`);
        }
      })();
      let done = false;
      const moving = Promise.all(movers.map(async (mover) => {
        while (!done) await mover.moveStale({ all: true, rounds: 1 });
      }));
      await Promise.all([writing.finally(() => done = true), moving]);
      await movers[0].moveStale({ all: true });
      assert.deepEqual(await feedIds(kvW), ids);
    } finally {
      for (const kv of [kvA, kvB, kvW]) kv.close();
    }
  });
});

/** The feed's first events once there are any, read every 50 ms; none after `ms`. */
async function eventsWithin(store: KvStore, ms: number) {
  const until = performance.now() + ms;
  for (;;) {
    const events = await store.readEvents({ after: 0, limit: 10 });
    if (events.length > 0 || performance.now() > until) return events;
    await sleep(50);
  }
}

Deno.test("events staged by a process that is gone are moved by another's watch once they wait too long", async () => {
  await withFile(async (path) => {
    const [kvGone, kvReader] = [await Deno.openKv(path), await Deno.openKv(path)];
    // The reader's clock stands still until the test moves it: "fresh" holds however slow the
    // machine is between the staging and the first look.
    let clockMs = Date.now();
    const reader = new KvStore(kvReader, { now: () => new Date(clockMs) });
    try {
      const ref = await plainTemplate(reader);
      reader.start();
      // A process that holds the mover's lease and staged events, then died.
      await kvGone.set(
        keys.feedMover,
        new TextEncoder().encode(JSON.stringify({ holder: "gone", until: Date.now() + 60_000 })),
      );
      await stage(kvGone, [staged("orphan-1"), staged("orphan-2")], clockMs);
      kvGone.close();
      // Fresh: they are left to the holder for now, a look of the watch later too.
      await sleep(WATCH_MS + 100);
      assert.deepEqual(await reader.readEvents({ after: 0, limit: 10 }), []);
      // Past STALE_MS: the reader only reads, and its watch moves them.
      clockMs += STALE_MS + 100;
      const events = await eventsWithin(reader, 5_000);
      assert.deepEqual(events.map((e) => e.intent.id), ["orphan-1", "orphan-2"]);
      // The reader's own writes go in after them.
      const [own] = await reader.insertIntents([{ intent: smallIntent("own", ref), ref }]);
      assert.equal(own.outcome, "created");
      assert.deepEqual(
        (await reader.readEvents({ after: 2, limit: 10 })).map((e) => e.intent.id),
        ["own"],
      );
    } finally {
      await reader.drain(performance.now() + 1_000);
      kvReader.close();
    }
  });
});

Deno.test("events staged by a process whose clock runs ahead are moved all the same", async () => {
  await withFile(async (path) => {
    const [kvGone, kvReader] = [await Deno.openKv(path), await Deno.openKv(path)];
    const reader = new KvStore(kvReader);
    try {
      await reader.prepare();
      reader.start();
      await kvGone.set(
        keys.feedMover,
        new TextEncoder().encode(JSON.stringify({ holder: "gone", until: Date.now() + 60_000 })),
      );
      // Its clock a minute ahead: by it, the events wait for a minute more.
      await stage(kvGone, [staged("ahead")], Date.now() + 60_000);
      kvGone.close();
      assert.deepEqual(await reader.readEvents({ after: 0, limit: 10 }), []);
      const events = await eventsWithin(reader, 2_000);
      assert.deepEqual(events.map((e) => e.intent.id), ["ahead"]);
    } finally {
      await reader.drain(performance.now() + 1_000);
      kvReader.close();
    }
  });
});

Deno.test("a waiting reader sees events staged by a process that is gone", async () => {
  await withFile(async (path) => {
    const [kvGone, kvReader] = [await Deno.openKv(path), await Deno.openKv(path)];
    const reader = new KvStore(kvReader);
    try {
      await reader.prepare();
      reader.start();
      await kvGone.set(
        keys.feedMover,
        new TextEncoder().encode(JSON.stringify({ holder: "gone", until: Date.now() + 60_000 })),
      );
      const started = performance.now();
      const woken = reader.waitForEvents(0, { timeoutMs: 5_000 });
      await stage(kvGone, [staged("late")]);
      kvGone.close();
      assert.equal(await woken, true);
      assert.ok(performance.now() - started < 2_000, `${performance.now() - started} ms`);
    } finally {
      await reader.drain(performance.now() + 1_000);
      kvReader.close();
    }
  });
});

Deno.test("a stopping store moves what it staged, whoever holds the lease", async () => {
  await withFile(async (path) => {
    const [kvA, kvB] = [await Deno.openKv(path), await Deno.openKv(path)];
    try {
      const a = new KvStore(kvA);
      const ref = await plainTemplate(a);
      await a.prepare();
      // Another process holds the lease and moves nothing.
      await kvB.set(
        keys.feedMover,
        new TextEncoder().encode(JSON.stringify({ holder: "other", until: Date.now() + 60_000 })),
      );
      const results = await a.insertIntents(
        ["s1", "s2", "s3"].map((id) => ({ intent: smallIntent(id, ref), ref })),
      );
      assert.deepEqual(results.map((r) => r.outcome), ["created", "created", "created"]);
      await a.drain(performance.now() + 2_000);
      assert.deepEqual(await feedIds(kvB), ["s1", "s2", "s3"]);
      await auditIntents(kvB, { staged: "none" });
    } finally {
      kvA.close();
      kvB.close();
    }
  });
});

Deno.test("one process moves for all: another leaves its events to the holder of the lease", async () => {
  await withFile(async (path) => {
    const [kvA, kvB] = [await Deno.openKv(path), await Deno.openKv(path)];
    try {
      const [a, b] = [new KvStore(kvA), new KvStore(kvB)];
      const ref = await plainTemplate(a);
      // A moves first: it holds the lease while it keeps finding staged events.
      await a.insertIntents([{ intent: smallIntent("a-0", ref), ref }]);
      for (let i = 0; i < 20; i++) {
        const store = i % 2 === 0 ? b : a;
        await store.insertIntents([{ intent: smallIntent(`x-${i}`, ref), ref }]);
      }
      const deadline = performance.now() + 2_000;
      while ((await feedIds(kvA)).length < 21 && performance.now() < deadline) {
        await sleep(20);
      }
      assert.deepEqual(await feedIds(kvA), [
        "a-0",
        ...Array.from({ length: 20 }, (_, i) => `x-${i}`),
      ]);
      await auditIntents(kvA, { staged: "none" });
    } finally {
      kvA.close();
      kvB.close();
    }
  });
});

/**
 * `kv` with its first `count` listings held, once read, until the test lets
 * each go: a listing that ran before a commit landed then answers after it.
 */
function heldListings(kv: Deno.Kv, count: number) {
  const held: { read: PromiseWithResolvers<void>; release: PromiseWithResolvers<void> }[] = [];
  let arrived = Promise.withResolvers<void>();
  async function* hold<T>(iter: Deno.KvListIterator<T>) {
    const entries: Deno.KvEntry<T>[] = [];
    for await (const entry of iter) entries.push(entry);
    if (held.length >= count) return yield* entries;
    const listing = { read: Promise.withResolvers<void>(), release: Promise.withResolvers<void>() };
    held.push(listing);
    arrived.resolve();
    await listing.release.promise;
    yield* entries;
  }
  const wrapped = new Proxy(kv, {
    get(target, name) {
      if (name === "list") {
        return <T>(selector: Deno.KvListSelector, options?: Deno.KvListOptions) =>
          hold(target.list<T>(selector, options));
      }
      const value = Reflect.get(target, name, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    kv: wrapped,
    /** The `n`th listing (from 0), once it has read. */
    async listing(n: number) {
      while (held.length <= n) {
        await arrived.promise;
        arrived = Promise.withResolvers<void>();
      }
      return held[n].release;
    },
  };
}

Deno.test("a commit that lands while a listing runs is not taken for moved: its reader still waits for it", async () => {
  await withFile(async (path) => {
    const kv = await Deno.openKv(path);
    try {
      await fenceHead(kv);
      const { kv: slow, listing } = heldListings(kv, 2);
      const sequencer = new Sequencer({
        kv: slow,
        feed: new Feed(kv),
        commit: retryWhileLocked,
        now: () => new Date(),
      });
      // A reader's look for stale events lists the staged prefix: empty, and held.
      const look = sequencer.moveStale({ all: true });
      const first = await listing(0);
      // Meanwhile this process stages an event; its mover's listing (after the commit) is held too.
      const events = [staged("landed")];
      sequencer.staged(await stage(kv, events), events);
      const second = await listing(1);
      first.resolve();
      await look;
      // The empty listing began before the commit: the event still waits, and so does its reader.
      let settled = false;
      const reader = sequencer.settled(5_000).then(() => settled = true);
      await sleep(100);
      assert.equal(settled, false, "a reader of its own writes waits for the move");
      second.resolve();
      await reader;
      assert.deepEqual(await feedIds(kv), ["landed"]);
      await sequencer.drain(performance.now() + 2_000);
    } finally {
      kv.close();
    }
  });
});

Deno.test("a commit told to the sequencer after its move does not make this process's next one look stale", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await fenceHead(kv);
    // The sequencer's clock: ahead of the wall clock by `skew`, or standing at `stopped`.
    const clock: { skew: number; stopped?: number } = { skew: 0 };
    const sequencer = new Sequencer({
      kv,
      feed: new Feed(kv),
      commit: retryWhileLocked,
      now: () => new Date(clock.stopped ?? Date.now() + clock.skew),
    });
    // Moved (a listing saw the commit) before the commit's own answer told the sequencer.
    const early = [staged("early")];
    const versionstamp = await stage(kv, early);
    await sequencer.moveStale({ all: true });
    sequencer.staged(versionstamp, early);
    // Past STALE_MS since that notice, and past the one-second lease its move took.
    clock.skew = 1_200;
    // Another process holds the lease now: what this process stages next is left to it until it
    // waits longer than STALE_MS, which it never does here (the clock stands still from now on).
    const stopped = clock.stopped = Date.now() + clock.skew;
    await kv.set(keys.feedMover, encodeLease({ holder: "another", until: stopped + 60_000 }));
    const next = [staged("next")];
    sequencer.staged(await stage(kv, next, stopped), next);
    await sleep(150);
    // Left to the holder: not in the feed yet.
    assert.equal((await new Feed(kv).freshHead()).position, 1);
    await sequencer.drain(performance.now() + 2_000);
  } finally {
    kv.close();
  }
});
