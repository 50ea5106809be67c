/**
 * What `deno task store-upgrade` does to a store, as a function: rewrites
 * values of earlier versions as bytes, makes the fence, takes in intents
 * stored before the feed existed and moves what is staged into the feed.
 * @module
 */

import { CommitLog } from "../../src/storage/commits.ts";
import { Feed } from "../../src/storage/feed.ts";
import type { FencedFrom } from "../../src/storage/fence.ts";
import { KvStore } from "../../src/storage/kv_store.ts";
import { convertValues } from "./convert.ts";

/** What an upgrade did. */
export interface Upgraded {
  /** Values rewritten as bytes. */
  rewritten: number;
  /** Intents of a version before the feed taken into it. */
  taken: number;
  /** What the feed head was before the fence. */
  from: FencedFrom;
}

/**
 * Brings the store on `kv` over to this version; safe to run again, and
 * while this version serves.
 *
 * @param progress told the running count of rewritten values after each commit.
 */
export async function upgradeStore(
  kv: Deno.Kv,
  progress?: (rewritten: number) => void,
): Promise<Upgraded> {
  const commits = new CommitLog(() => new Date());
  const rewritten = await convertValues(
    { kv, feed: new Feed(kv), commit: (write) => commits.run(write) },
    progress,
  );
  const store = new KvStore(kv);
  const from = await store.prepare();
  const taken = await store.takeInEarlier();
  await store.moveAll();
  return { rewritten, taken, from };
}
