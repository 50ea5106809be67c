/**
 * Every Deno KV key the service uses, built in one place, with the layout of
 * its value. Every value is bytes or a `Deno.KvU64` (see `codec.ts`).
 *
 * - `["events", last]` → a run of consecutive feed events, oldest first,
 *   keyed by the position of its last event; the feed is these in key
 *   order (`feed.ts` reads both forms). Written by moves: a feed
 *   index (byte 0 = 4; per staged block, in order, its versionstamp as 10
 *   bytes and its count of events as a 16-bit big-endian integer: the events
 *   are those blocks', read where their commits wrote them,
 *   `index_codec.ts`). Written by earlier versions: a block holding its
 *   events (byte 0 = 1; per event a 32-bit big-endian length and the UTF-8
 *   JSON `{"type","intent"}` of the record without its body, then a 32-bit
 *   big-endian length and the body, the request as UTF-8 JSON).
 * - `["feed_head"]` → bytes: byte 0 = 5, the position of the newest event
 *   as a 64-bit big-endian integer and the versionstamp of the last staged
 *   block in the feed (10 bytes, zeros before the first); only moves check
 *   and move it (`sequencer.ts`). Written in this form before this version
 *   writes anything (`fence.ts`). Earlier forms, read and rewritten by the
 *   fence: a KvU64 (or a number) that every commit of earlier versions
 *   checked and moved, and bytes with byte 0 = 2 and the position, whose
 *   moves deleted what they moved (so everything staged still waits). A
 *   version that knows only those forms cannot read this one, so it writes
 *   nothing and moves nothing beside this one.
 * - `["feed_staged", versionstamp]` → a staged block: the events of one
 *   request's commit, keyed by that commit's versionstamp
 *   (`Deno.Kv.commitVersionstamp()`), so their key order is their commit
 *   order. Byte 0 = 3, a 64-bit big-endian time of staging (Unix ms), a
 *   16-bit big-endian count of events, then the events' frames as in a
 *   block. Written once and never changed: those up to the head's
 *   versionstamp are in the feed (a move indexes them), those after it wait.
 * - `["feed_mover"]` → UTF-8 JSON `{"holder","until"}`: the process that
 *   moves staged events into the feed, until `until` (Unix ms) unless its
 *   next move renews it. Advisory: it saves duplicate work; correctness
 *   comes from the head's check.
 * - `["intents", id]` → where the intent's current record is: byte 0 = 2
 *   and a 16-bit big-endian index, the event at that index in the staged
 *   block of the commit that wrote this entry (`["feed_staged", v]`, `v` this
 *   entry's versionstamp); every commit that stores or changes the intent
 *   checks this key's version (null for a new id). Earlier forms, still
 *   read: the record itself (the frame of its event, byte 0 = 0), and UTF-8
 *   JSON `[blockKey,index]`, where the intent's latest event is in a feed
 *   block; a version from before the feed wrote `[ms, seq, writer, index]`
 *   into its block, until `take_in.ts` takes it in.
 * - `["templates", id]`, `["policies", id]` → byte 0 = 1, a 16-bit big-endian
 *   length and the content type (UTF-8), then the document's bytes.
 * - `["config", "runtime"]` → UTF-8 JSON `{"evidence_extractor_url","updated_at"}`.
 * - `["due", kind, atMs, id]` → empty: work of `kind` about `id` that falls
 *   due at `atMs` (Unix milliseconds), written by the commit that makes it
 *   due and removed by the commit that does it (see `src/scheduler/`). Each
 *   kind is listed apart, so work one version does not know never holds up
 *   the rest.
 * - `["pending_counts", kind, documentId]` → UTF-8 JSON `{key: count}`: how
 *   many intents each key (as the governed template or policy writes it)
 *   signed at submission are pending under that document (`kind` is
 *   `template` or `policy`); absent when none is. Every commit that changes
 *   it checks its version (`document_counts.ts`).
 * - `["pending_by_signer", kind, documentId, key]` → KvU64: the same count,
 *   one key per signer, as earlier versions kept it; read once per document,
 *   taken into its `["pending_counts", …]` and removed, in the commit that
 *   first writes it.
 * - `["store_layout"]` → KvU64: the layout of the values (2: bytes and KvU64
 *   only), once every value is in it: written with the first head of a new
 *   store (`fence.ts`) and by `deno task store-upgrade`.
 * - `["health"]`: never written; readiness reads it.
 * - `["intent_batches", ms, seq, writer]`: blocks of a version from before
 *   the feed (JavaScript values), taken into the feed and removed by
 *   `take_in.ts`, also while such a version runs beside this one.
 * - `["webhooks", id]` → UTF-8 JSON of a webhook endpoint
 *   `{"id","url","events","description","status","disabledReason","createdAt",
 *   "secrets":[{"secret","expiresAt"}],"position","retrying","failures",
 *   "retryAt","attempts","lastAttempt"}` (`Endpoint` in
 *   `src/webhooks/endpoint.ts`): its cursor over the feed and its retry state
 *   included. Ids sort by creation time.
 * - `["webhooks_count"]` → KvU64: how many endpoints exist; checked and moved
 *   by the commits that add or remove one, so there are never more than 100.
 * - `["webhook_changes"]` → KvU64: grows by one with every admin change of an
 *   endpoint; deliverers of other processes read it to notice changes.
 * - `["webhook_leases", id]` → UTF-8 JSON `{"holder","until"}`: the process
 *   that delivers to the endpoint, until `until` (Unix ms) unless it renews.
 *   Its due work `["due", "webhook", until, id]` moves with it.
 * - `["webhook_attempts", id, n]` → UTF-8 JSON `{"eventId","attempt","at",
 *   "status","error","durationMs"}`: the endpoint's n-th attempt; the commit
 *   that writes one removes the one 100 before it.
 * @module
 */

import type { DocumentKind } from "../domain/intent.ts";

/** Key builders. */
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
  document: (kind: DocumentKind, id: string): Deno.KvKey => [
    kind === "template" ? "templates" : "policies",
    id,
  ],
  documentsPrefix: (kind: DocumentKind): Deno.KvKey => [
    kind === "template" ? "templates" : "policies",
  ],
  config: ["config", "runtime"] as Deno.KvKey,
  due: (kind: string, atMs: number, id: string): Deno.KvKey => ["due", kind, atMs, id],
  duePrefix: (kind: string): Deno.KvKey => ["due", kind],
  pendingCounts: (kind: DocumentKind, documentId: string): Deno.KvKey => [
    "pending_counts",
    kind,
    documentId,
  ],
  pendingBySignerPrefix: (kind: DocumentKind, documentId: string): Deno.KvKey => [
    "pending_by_signer",
    kind,
    documentId,
  ],
  pendingBySigner: (kind: DocumentKind, documentId: string, key: string): Deno.KvKey => [
    "pending_by_signer",
    kind,
    documentId,
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
