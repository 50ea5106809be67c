/**
 * The write layout of a store, and the one step that changes it.
 *
 * - The *head layout* (earlier versions): every commit that adds events
 *   checks and moves `["feed_head"]`, so all commits, on every instance, take
 *   turns on that one key (`append.ts`).
 * - The *staged layout*: a request's commit checks only what it touches (its
 *   id, its document, its intent's version, the pending counts it changes)
 *   and stages its events under a key of their own; a mover puts staged
 *   events into the feed in commit order (`sequencer.ts`).
 *
 * The feed head's value says which (`codec.ts`): a KvU64 in the head layout,
 * bytes in the staged one. A writer of the head layout reads ids under the
 * head's check, so it would miss an id stored by a staged commit, which does
 * not move the head: the two must never write at once. So the staged layout
 * begins only by an explicit step, once no writer of the head layout runs
 * ({@link switchToStaged}); an empty store on a networked KV begins in it at
 * once ({@link beginLayout}, {@link layoutFor}). Rewriting the head as bytes changes its version,
 * so every head-layout commit of this version still in flight fails its
 * check and finds the new layout, and a version that knows only the head
 * layout cannot read the head at all (it throws on an unknown layout), so it
 * refuses to write rather than write beside the staged layout. Nothing else
 * is rewritten: records of the head layout stay readable as they are.
 * @module
 */

import { encodeHead, type WriteLayout } from "./codec.ts";
import { decodeFeedHead as decodeHeadValue, encodeIndexedHead } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { retryWhileLocked } from "./retry.ts";

export type { WriteLayout } from "./codec.ts";

/** The store's write layout as KV holds it now. */
export async function readWriteLayout(kv: Deno.Kv): Promise<WriteLayout> {
  return decodeHeadValue((await kv.get<unknown>(keys.feedHead)).value).layout;
}

/**
 * Begins `layout` in a store that has no feed head yet (an empty store: the
 * head is written by the first commit of either layout).
 *
 * @returns the layout the store has afterwards: `layout`, or the other one
 *   when a writer of it wrote the head first.
 */
export async function beginLayout(kv: Deno.Kv, layout: "head" | "staged"): Promise<WriteLayout> {
  for (;;) {
    const entry = await kv.get<unknown>(keys.feedHead);
    const found = decodeHeadValue(entry.value).layout;
    if (found !== "empty") return found;
    const result = await retryWhileLocked(() =>
      kv.atomic()
        .check({ key: keys.feedHead, versionstamp: null })
        .set(
          keys.feedHead,
          layout === "staged" ? encodeIndexedHead({ position: 0, through: "" }) : encodeHead(0),
        )
        .commit()
    );
    if (result.ok) return layout;
  }
}

/** Begins the staged layout in an empty store (see {@link beginLayout}). */
export function beginStaged(kv: Deno.Kv): Promise<WriteLayout> {
  return beginLayout(kv, "staged");
}

/**
 * The layout a new store begins in, by where it lives: the staged layout on
 * a networked KV (a KV Connect URL, or Deno Deploy's KV, which `Deno.openKv()`
 * opens there), where commits wait on round trips and many instances write
 * at once; the head layout on a local file (or Deno's default file), where
 * SQLite takes one write at a time whatever the layout and the head layout
 * does the same work in fewer commits (the staged layout checks each id, so
 * a commit carries nine intents, not `COMMIT_BATCH_MAX`). `:memory:` is staged.
 */
export function layoutFor(kvPath: string | undefined, onDenoDeploy: boolean): "head" | "staged" {
  if (kvPath === undefined) return onDenoDeploy ? "staged" : "head";
  if (kvPath === ":memory:" || /^https?:\/\//i.test(kvPath)) return "staged";
  return "head";
}

/**
 * Switches a store of the head layout to the staged layout: the operator's
 * step once every process of a version that writes the head layout has
 * stopped (docs/deployment.md, upgrading). Safe to run again: a store
 * already staged is left as it is.
 *
 * @returns the layout before the step and after it.
 */
export async function switchToStaged(
  kv: Deno.Kv,
): Promise<{ before: WriteLayout; after: WriteLayout }> {
  for (;;) {
    const entry = await kv.get<unknown>(keys.feedHead);
    const { position, layout } = decodeHeadValue(entry.value);
    if (layout === "staged") return { before: layout, after: layout };
    if (layout === "empty") return { before: layout, after: await beginStaged(kv) };
    // Checked against the head as read: a head-layout commit that lands first moves it, and
    // the step reads it again.
    const result = await retryWhileLocked(() =>
      kv.atomic()
        .check(entry)
        .set(keys.feedHead, encodeIndexedHead({ position, through: "" }))
        .commit()
    );
    if (result.ok) return { before: layout, after: "staged" };
  }
}

/**
 * Rewrites a staged head of earlier versions (whose moves copied staged
 * events into the feed and deleted them) as this version's, which they
 * cannot read: from then on no earlier process moves or deletes a staged
 * block, so this version's blocks stay where its pointers lead. Their request
 * commits still stage events, which this version's moves take in. The fence
 * comes before this process writes anything; it is one commit, checked
 * against the head as read, and a no-op on a head of this version.
 */
export async function fenceEarlierStaged(kv: Deno.Kv): Promise<void> {
  for (;;) {
    const entry = await kv.get<unknown>(keys.feedHead);
    const head = decodeHeadValue(entry.value);
    if (head.layout !== "staged" || head.indexed) return;
    const result = await retryWhileLocked(() =>
      kv.atomic()
        .check(entry)
        .set(keys.feedHead, encodeIndexedHead({ position: head.position, through: "" }))
        .commit()
    );
    if (result.ok) return;
  }
}
