/**
 * Every Deno KV key the service uses, with the layout of its value: bytes
 * or a `Deno.KvU64`. Integers are big-endian; versionstamps are 10 bytes.
 *
 * - `["events", last]` → a run of feed events ending at position `last`;
 *   the feed is these in key order. Written by moves: a feed index (byte 0
 *   = 4, then per staged block its versionstamp and a 16-bit count of
 *   events, `index_codec.ts`). Written by earlier versions: a block (byte 0
 *   = 1, then per event a 32-bit length and the UTF-8 JSON
 *   `{"type","intent"}` of the record without its body, a 32-bit length
 *   and the body). A frame written now may also say `"first":true` (the
 *   event that stored its intent) and `"recordSha256"`: the `R` of its log
 *   entry (docs/interface.md §14), computed as it was stored.
 * - `["feed_head"]` → byte 0 = 5, the newest position (64-bit) and the
 *   versionstamp of the last staged block in the feed (zeros before any);
 *   only moves check and write it (`sequencer.ts`), after the fence
 *   (`fence.ts`) wrote it in this form. Earlier forms, which the fence
 *   rewrites: a KvU64 (or a number) every commit moved, and byte 0 = 2 and
 *   the position, whose moves deleted what they moved.
 * - `["feed_staged", versionstamp]` → the events of one request's commit,
 *   keyed by its `kv.commitVersionstamp()` (key order is commit order):
 *   byte 0 = 3, the time of staging (64-bit Unix ms), a 16-bit count, then
 *   frames as in a block. Never changed: those up to the head's
 *   versionstamp are in the feed, the rest wait.
 * - `["feed_mover"]` → UTF-8 JSON `{"holder","until"}` (Unix ms): the lease
 *   of the process that moves; advisory, the head's check keeps it correct.
 * - `["intents", id]` → byte 0 = 2 and a 16-bit index: the event at that
 *   index in the staged block of the commit that wrote this entry; every
 *   commit that stores or changes the intent checks this entry. Earlier
 *   forms, still read: the record (its event's frame, byte 0 = 0), UTF-8
 *   JSON `[blockKey,index]` into a feed block, and `[ms, seq, writer,
 *   index]` into a block of a version before the feed (`take_in.ts`).
 * - `["templates", id]`, `["policies", id]` → byte 0 = 1, a 16-bit length
 *   and the content type, then the document's bytes.
 * - `["ruled_templates", id]`, `["ruled_policies", id]` → the same, for a
 *   document with rules (docs/interface.md §15): where versions before rules
 *   do not look, so that none of them takes it for one that governs nothing.
 * - `["config", "runtime"]` → UTF-8 JSON `{"evidence_extractor_url","updated_at"}`.
 * - `["due", kind, atMs, id]` → empty: work of `kind` on `id` due at `atMs`,
 *   written by the commit that makes it due, removed by the one that does
 *   it (`src/scheduler/`); each kind is listed apart.
 * - `["pending_counts", kind, documentId]` → UTF-8 JSON `{key: count}`:
 *   intents pending under a template or policy, per key that signed at
 *   submission; absent when none (`document_counts.ts`).
 * - `["pending_by_signer", kind, documentId, key]` → KvU64: the same count
 *   as earlier versions kept it, taken in and removed by the first commit
 *   of the document's `["pending_counts", …]`.
 * - `["store_layout"]` → KvU64 2 once every value is bytes or KvU64: written
 *   with a new store's first head (`fence.ts`) and by `deno task store-upgrade`.
 * - `["health"]`: never written; readiness reads it.
 * - `["intent_batches", ms, seq, writer]`: blocks of a version before the
 *   feed (JavaScript values), taken in and removed by `take_in.ts`.
 * - `["webhooks", id]` → UTF-8 JSON of an `Endpoint`
 *   (`src/webhooks/endpoint.ts`), its cursor and retry state included; ids
 *   sort by creation time.
 * - `["webhooks_count"]` → KvU64: endpoints that exist (at most 100),
 *   checked by the commits that add or remove one.
 * - `["webhook_changes"]` → KvU64, one more with each admin change of an
 *   endpoint, which other processes' deliverers watch.
 * - `["webhook_leases", id]` → UTF-8 JSON `{"holder","until"}`: who delivers
 *   to the endpoint; its due work `["due", "webhook", until, id]` moves with it.
 * - `["webhook_attempts", id, n]` → UTF-8 JSON of the n-th `AttemptRecord`;
 *   the commit writing one removes the one 100 before it.
 * @module
 */

import type { DocumentKind, DocumentRef } from "../domain/intent.ts";

const documents = (kind: DocumentKind, ruled = false) =>
  `${ruled ? "ruled_" : ""}${kind === "template" ? "templates" : "policies"}`;

/** Key builders. */
/** What a document reference's version says: its key and its versionstamp. */
export interface DocumentEntry {
  key: Deno.KvKey;
  versionstamp: string;
}

/** The prefix of a reference's version that says the document is stored as ruled. */
const RULED_VERSION = "ruled:";

/** The version a reference carries: the versionstamp, prefixed when stored as ruled. */
export function documentVersion(versionstamp: string, ruled: boolean): string {
  return ruled ? `${RULED_VERSION}${versionstamp}` : versionstamp;
}

/** The key and versionstamp of the document a reference found. */
export function documentEntry(ref: DocumentRef): DocumentEntry {
  const ruled = ref.version.startsWith(RULED_VERSION);
  return {
    key: keys.document(ref.kind, ref.id, ruled),
    versionstamp: ruled ? ref.version.slice(RULED_VERSION.length) : ref.version,
  };
}

export const keys = {
  intent: (id: string): Deno.KvKey => ["intents", id],
  intentsPrefix: ["intents"] as Deno.KvKey,
  events: (lastPosition: number): Deno.KvKey => ["events", lastPosition],
  eventsPrefix: ["events"] as Deno.KvKey,
  feedHead: ["feed_head"] as Deno.KvKey,
  /** A staged block's key; `kv.commitVersionstamp()` names the commit writing it. */
  staged: (versionstamp: string | symbol): Deno.KvKey => ["feed_staged", versionstamp],
  stagedPrefix: ["feed_staged"] as Deno.KvKey,
  feedMover: ["feed_mover"] as Deno.KvKey,
  /** A document's key; `ruled` for a document with rules. */
  document: (kind: DocumentKind, id: string, ruled = false): Deno.KvKey => [
    documents(kind, ruled),
    id,
  ],
  documentsPrefix: (kind: DocumentKind): Deno.KvKey => [documents(kind)],
  config: ["config", "runtime"] as Deno.KvKey,
  due: (kind: string, atMs: number, id: string): Deno.KvKey => ["due", kind, atMs, id],
  duePrefix: (kind: string): Deno.KvKey => ["due", kind],
  pendingCounts: (kind: DocumentKind, docId: string): Deno.KvKey => ["pending_counts", kind, docId],
  pendingBySignerPrefix: (kind: DocumentKind, docId: string): Deno.KvKey => [
    "pending_by_signer",
    kind,
    docId,
  ],
  pendingBySigner: (kind: DocumentKind, docId: string, key: string): Deno.KvKey => [
    ...keys.pendingBySignerPrefix(kind, docId),
    key,
  ],
  storeLayout: ["store_layout"] as Deno.KvKey,
  health: ["health"] as Deno.KvKey,
  earlierBlocksPrefix: ["intent_batches"] as Deno.KvKey,
  webhook: (id: string): Deno.KvKey => ["webhooks", id],
  webhooksPrefix: ["webhooks"] as Deno.KvKey,
  webhooksCount: ["webhooks_count"] as Deno.KvKey,
  webhookChanges: ["webhook_changes"] as Deno.KvKey,
  webhookLease: (id: string): Deno.KvKey => ["webhook_leases", id],
  webhookAttempt: (id: string, n: number): Deno.KvKey => ["webhook_attempts", id, n],
  webhookAttemptsPrefix: (id: string): Deno.KvKey => ["webhook_attempts", id],
};
