/**
 * The log's integration on real stores (a KV file and KV Connect): the tree
 * is the feed's entries in feed order, whoever integrates, however many
 * integrate at once and while intents are committed; a process that stops
 * between steps leaves a state any other resumes from; checkpoints never
 * sign two roots for one size; a process that takes over a checkpointed log
 * signs as the tree grows, even when the feed never pauses.
 */

import assert from "node:assert/strict";
import { base64 } from "@scure/base";
import { leafHash, memoryTree, treeHash } from "../../protocol/log/hash.ts";
import {
  generateNoteKey,
  openNote,
  parseSignerKey,
  parseVerifierKey,
} from "../../protocol/log/note.ts";
import { parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { encodeEntryBundle, tileData, tilesOfTree } from "../../protocol/log/tile.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { CheckpointSigner, decodeCheckpoint } from "../../src/log/checkpoints.ts";
import { integrateStep } from "../../src/log/integrate.ts";
import { renderEvent } from "../../src/domain/record.ts";
import { entryBytes } from "../../protocol/log/entry.ts";
import { Integrator } from "../../src/log/integrator.ts";
import { EntryTap } from "../../src/log/entry_tap.ts";
import { LogMetrics } from "../../src/log/metrics.ts";
import { decodeState, logKeys } from "../../src/log/keys.ts";
import { fullPath, readTiles } from "../../src/log/tiles.ts";
import { findLeaf } from "../../src/log/leaf_index.ts";
import { KvLogReader } from "../../src/log/reader.ts";
import { insertMany } from "../support/store_kit.ts";
import { storeTest, type TestStore } from "../support/stores.ts";
import { sleep } from "../support/time.ts";

const { signerKey, verifierKey } = generateNoteKey("log.test/intents");
const signer = parseSignerKey(signerKey);
const logKey = parseVerifierKey(verifierKey);

/**
 * The entries of every event of the feed, in feed order, as a reader makes
 * them from the events the feed serves (not as the integrator does).
 */
async function feedEntries(store: KvStore): Promise<Uint8Array[]> {
  const entries: Uint8Array[] = [];
  for (;;) {
    const events = await store.readEvents({ after: entries.length, limit: 500 });
    if (events.length === 0) return entries;
    for (const event of events) {
      const served = JSON.parse(renderEvent(event));
      entries.push(entryBytes(served.type, served.record));
    }
  }
}

/**
 * Checks that the stored tree is exactly the tree of `entries`: state, every
 * tile, and every bundle as the log serves it (made from `store`'s feed).
 */
async function assertTreeOf(kv: Deno.Kv, store: KvStore, entries: Uint8Array[]): Promise<void> {
  const state = decodeState((await kv.get(logKeys.state)).value);
  assert.equal(state.size, entries.length);
  const leaves = entries.map(leafHash);
  assert.deepEqual(state.rootHash, treeHash(leaves));
  const tree = memoryTree(leaves);
  const tiles = tilesOfTree(entries.length);
  const stored = await readTiles(kv, tiles);
  for (const tile of tiles) {
    assert.deepEqual(stored.get(fullPath(tile)), tileData(tile, tree), fullPath(tile));
  }
  const reader = new KvLogReader({ kv, store, verifierKey: () => Promise.resolve(verifierKey) });
  for (let index = 0; index * 256 < entries.length; index++) {
    const width = Math.min(256, entries.length - index * 256);
    const bundle = await reader.tile({ level: "entries", index, width });
    assert.deepEqual(bundle, encodeEntryBundle(entries.slice(index * 256, index * 256 + width)));
  }
  // Wider than the tree holds: none.
  const last = Math.floor(entries.length / 256);
  const beyond = { level: "entries" as const, index: last, width: entries.length % 256 + 1 };
  if (beyond.width <= 256) assert.equal(await reader.tile(beyond), null);
  for (const i of [0, entries.length - 1]) {
    assert.equal(await findLeaf(kv, leaves[i], entries.length), i);
  }
}

/** Watches the stored checkpoint until stopped: every one seen, by size. */
function watchCheckpoints(kv: Deno.Kv): { stop(): Promise<Map<number, Set<string>>> } {
  const seen = new Map<number, Set<string>>();
  let stopped = false;
  const running = (async () => {
    while (!stopped) {
      const held = decodeCheckpoint((await kv.get(logKeys.checkpoint)).value);
      if (held) {
        const opened = openNote(held.text, [logKey]);
        assert.ok(opened.ok, "the checkpoint's signature verifies");
        const roots = seen.get(held.size) ?? new Set();
        roots.add(base64.encode(held.rootHash));
        seen.set(held.size, roots);
      }
      await sleep(5);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await running;
      return seen;
    },
  };
}

/**
 * An integrator of `kv` reading `store`, signing with the test's key (its
 * metrics in `metrics`), that fails the test on any failure it reports.
 */
function integratorOf(
  kv: Deno.Kv,
  store: ConstructorParameters<typeof Integrator>[0]["store"],
  metrics?: LogMetrics,
) {
  const report = (line: string) => assert.fail(line);
  const signing = new CheckpointSigner({ kv, signer, report });
  return new Integrator({ kv, store, signer: signing, report, metrics });
}

/**
 * Two processes on the test's store, each with its own handle and storage:
 * `close` lets both movers go and closes both handles.
 */
async function twoProcesses(t: TestStore) {
  const kvA = await t.open();
  const kvB = await t.open();
  const storeA = new KvStore(kvA);
  const storeB = new KvStore(kvB);
  return {
    kvA,
    kvB,
    storeA,
    storeB,
    async close() {
      await storeA.drain(performance.now() + 2000);
      await storeB.drain(performance.now() + 2000);
      kvA.close();
      kvB.close();
    },
  };
}

storeTest(
  "two integrators beside committing writers build the feed's tree and agree",
  async (t) => {
    const processes = await twoProcesses(t);
    const { kvA, kvB, storeA, storeB } = processes;
    const a = integratorOf(kvA, storeA);
    const b = integratorOf(kvB, storeB);
    const watch = watchCheckpoints(kvA);
    try {
      await storeA.prepare();
      await storeB.prepare();
      // Both race on every step (each calls catchUp, lease or not), while intents are committed.
      let writing = true;
      const writers = Promise.all([insertMany(storeA, "a", 170), insertMany(storeB, "b", 170)])
        .finally(() => writing = false);
      const race = async (integrator: Integrator) => {
        while (writing) {
          await integrator.catchUp();
          await sleep(3);
        }
      };
      await Promise.all([writers, race(a), race(b)]);
      await storeA.moveAll();
      await storeB.moveAll();
      await Promise.all([a.catchUp(), b.catchUp()]);
      const entries = await feedEntries(storeA);
      assert.equal(entries.length, 340);
      await assertTreeOf(kvA, storeA, entries);
      const seen = await watch.stop();
      assert.ok(seen.size >= 1);
      for (const [size, roots] of seen) assert.equal(roots.size, 1, `one root for size ${size}`);
      const last = decodeCheckpoint((await kvB.get(logKeys.checkpoint)).value)!;
      assert.equal(last.size, 340);
      assert.equal(parseCheckpoint(openNoteText(last.text)).origin, "log.test/intents");
    } finally {
      await watch.stop();
      await processes.close();
    }
  },
);

storeTest(
  "entries from this process's moves build the tree the feed's events build, a gap read from the feed",
  async (t) => {
    const processes = await twoProcesses(t);
    const { kvA, storeA, storeB } = processes;
    const tap = new EntryTap();
    const untap = storeA.onOwnEvents((events) => tap.take(events));
    const recent = (after: number, limit: number) => tap.entriesAfter(after, limit);
    try {
      await storeA.prepare();
      await insertMany(storeA, "own", 300);
      await storeA.moveAll();
      const first = await integrateStep({ kv: kvA, store: storeA, recent });
      assert.ok(first.outcome === "integrated" && first.recent && first.count === 300);
      // This process's mover stops and lets its lease go: another process moves its own events.
      await storeA.drain(performance.now() + 2000);
      await storeB.prepare();
      await insertMany(storeB, "other", 40);
      await storeB.moveAll();
      const second = await integrateStep({ kv: kvA, store: storeA, recent });
      assert.ok(second.outcome === "integrated" && !second.recent && second.count === 40);
      const entries = await feedEntries(storeA);
      assert.equal(entries.length, 340);
      await assertTreeOf(kvA, storeA, entries);
    } finally {
      untap();
      await processes.close();
    }
  },
);

storeTest(
  "a running integrator covers its own process's events and another's, interleaved",
  async (t) => {
    const processes = await twoProcesses(t);
    const { kvA, storeA, storeB } = processes;
    const a = integratorOf(kvA, storeA);
    try {
      await storeA.prepare();
      await storeB.prepare();
      a.start();
      // Its own events and another process's, interleaved in the feed.
      await Promise.all([insertMany(storeA, "own", 400), insertMany(storeB, "other", 200)]);
      await storeA.moveAll();
      await storeB.moveAll();
      const entries = await feedEntries(storeA);
      assert.equal(entries.length, 600);
      const deadline = performance.now() + 10_000;
      while (decodeState((await kvA.get(logKeys.state)).value).size < 600) {
        assert.ok(performance.now() < deadline, "the running integrator covers the feed");
        await sleep(50);
      }
      await assertTreeOf(kvA, storeA, entries);
    } finally {
      await a.stop();
      await processes.close();
    }
  },
);

function openNoteText(text: string): string {
  const opened = openNote(text, [logKey]);
  assert.ok(opened.ok);
  return opened.text;
}

storeTest("a process that stops between steps leaves a state another resumes from", async (t) => {
  const kv = await t.open();
  const other = await t.open();
  const store = new KvStore(kv);
  try {
    await store.prepare();
    await insertMany(store, "r", 300);
    await store.moveAll();
    // Steps of 100 entries, then the process is gone (the steps of a bounded loop, abandoned).
    for (let i = 0; i < 2; i++) {
      const step = await integrateStep({ kv, store, limit: 100 });
      assert.equal(step.outcome, "integrated");
    }
    assert.equal(decodeState((await kv.get(logKeys.state)).value).size, 200);
    const resumed = integratorOf(other, new KvStore(other));
    const state = await resumed.catchUp();
    assert.equal(state.size, 300);
    await assertTreeOf(other, store, await feedEntries(store));
  } finally {
    await store.drain(performance.now() + 2000);
    kv.close();
    other.close();
  }
});

storeTest(
  "under a feed that never pauses, each pass signs the tree its read found, the first one too",
  async (t) => {
    const kv = await t.open();
    const store = new KvStore(kv);
    try {
      await store.prepare();
      await insertMany(store, "s", 20);
      await store.moveAll();
      // Before each read the feed grows by nine: no read finds the feed as it stands when the
      // pass ends, and no checkpoint was stored before (a new log, or a feed older than the log).
      let reads = 0;
      const growing: Pick<KvStore, "readEvents" | "waitForEvents" | "onOwnEvents"> = {
        readEvents: async (options) => {
          const events = await store.readEvents(options);
          if (reads++ < 4) {
            await insertMany(store, `g${reads}`, 9);
            await store.moveAll();
          }
          return events;
        },
        waitForEvents: (after, options) => store.waitForEvents(after, options),
        onOwnEvents: (listener) => store.onOwnEvents(listener),
      };
      // A clock that moves a second at each reading: a lag would show at once.
      let clock = 0;
      const metrics = new LogMetrics(() => clock += 1_000);
      const integrator = integratorOf(kv, growing, metrics);
      const signed: number[] = [];
      for (let pass = 0; pass < 5; pass++) {
        const state = await integrator.catchUp();
        const checkpoint = decodeCheckpoint((await kv.get(logKeys.checkpoint)).value);
        assert.equal(checkpoint?.size, state.size, "each pass ends signed");
        signed.push(state.size);
      }
      assert.deepEqual(signed, [20, 29, 38, 47, 56]);
      // Each pass reached the feed's end as its read found it: the log is not behind.
      const lag = metrics.render().find((l) =>
        l.startsWith("intents_log_integration_lag_seconds ")
      );
      assert.equal(lag, "intents_log_integration_lag_seconds 0");
    } finally {
      await store.drain(performance.now() + 2000);
      kv.close();
    }
  },
);
