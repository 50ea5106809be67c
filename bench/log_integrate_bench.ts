/**
 * The log's integration of a stored feed (docs/performance.md, "The log"):
 * 4,096 events of a Variant B record each, integrated from an empty tree on a
 * KV file, in steps as the integrator takes them (entries, leaf hashes, tiles,
 * the leaf index of a chunk completed, in one commit a step). Three ways: the
 * entries at hand, as the integrator's tap holds its own process's (made
 * before the timing); read back from the feed with each event's `R` stored
 * as a new intent's is; and read back without (as events of decisions and of
 * earlier versions are: the record's JCS made at integration).
 */

import { join } from "node:path";
import { canonicalBytesWithin } from "@intents/protocol/jcs";
import type { NewIntent } from "../src/domain/intent.ts";
import { integrateStep, readEntries } from "../src/log/integrate.ts";
import { KvStore } from "../src/storage/kv_store.ts";
import { TYPICAL_POLICY, TYPICAL_SIGNER, typicalRequest } from "./_typical_request.ts";

const EVENTS = 4096;
const POLICY = TYPICAL_POLICY;

/** A signed Variant B intent as the load sends it, `canonical` as verification leaves it. */
function intent(withR: boolean): NewIntent {
  const id = crypto.randomUUID();
  const value = typicalRequest(id, `load-${id}`);
  const { bytes } = canonicalBytesWithin(value, value.intent);
  return {
    id,
    variant: "B",
    refId: POLICY,
    authorship: { kind: "Ed25519", signers: [TYPICAL_SIGNER] },
    body: new TextEncoder().encode(JSON.stringify(value)),
    state: "accepted",
    ...(withR ? { canonical: { bytes, attrs: value.intent.attrs } } : {}),
  };
}

/** A KV file holding a feed of {@link EVENTS} events and no tree. */
async function storedFeed(dir: string, withR: boolean): Promise<string> {
  const path = join(dir, `feed-${withR}.kv`);
  const kv = await Deno.openKv(path);
  const store = new KvStore(kv);
  await store.prepare();
  const bytes = new TextEncoder().encode("{}");
  await store.putDocument("policy", POLICY, { contentType: "application/json", bytes });
  const ref = await store.findDocument("policy", POLICY);
  if (!ref) throw new Error("policy not stored");
  for (let i = 0; i < EVENTS; i += 64) {
    const batch = Array.from({ length: 64 }, () => ({ intent: intent(withR), ref }));
    const results = await store.insertIntents(batch);
    if (results.some((r) => r.outcome !== "created")) throw new Error("not created");
  }
  await store.moveAll();
  kv.close();
  return path;
}

const dir = await Deno.makeTempDir({ prefix: "log-integrate-bench-" });
const feeds = { "R stored": await storedFeed(dir, true), "R made": await storedFeed(dir, false) };

/** The entries of every event of the feed at `path`, as the tap would hold them. */
async function entriesOf(path: string): Promise<Uint8Array[]> {
  const kv = await Deno.openKv(path);
  const store = new KvStore(kv);
  const entries: Uint8Array[] = [];
  for (let read; (read = await readEntries(store, entries.length, 500)) !== null;) {
    entries.push(...read.entries);
  }
  kv.close();
  return entries;
}
const held = await entriesOf(feeds["R stored"]);

const ways = [
  { name: "entries at hand", feed: feeds["R stored"], recent: true },
  { name: "R stored", feed: feeds["R stored"], recent: false },
  { name: "R made", feed: feeds["R made"], recent: false },
];
for (const { name, feed, recent } of ways) {
  Deno.bench(
    `integrate ${EVENTS} events, ${name} (KV file)`,
    { group: "integrate", baseline: recent, n: 10 },
    async (b) => {
      const path = join(dir, "run.kv");
      await Deno.copyFile(feed, path);
      const kv = await Deno.openKv(path);
      const store = new KvStore(kv);
      await store.prepare();
      const options = {
        kv,
        store,
        ...(recent
          ? { recent: (after: number, limit: number) => held.slice(after, after + limit) }
          : {}),
      };
      b.start();
      let count = 0;
      for (let step = await integrateStep(options); step.outcome === "integrated";) {
        count += step.count;
        step = await integrateStep(options);
      }
      b.end();
      kv.close();
      if (count !== EVENTS) throw new Error(`integrated ${count} of ${EVENTS}`);
      for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
    },
  );
}

globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
