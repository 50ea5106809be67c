/**
 * Every Deno KV key the service uses, built in one place.
 *
 * - `["events", last]` → {@link StoredEvent}[]: a block of consecutive feed
 *   events, oldest first, keyed by the position of its last event. The feed is
 *   the blocks in key order; an intent's record lives in the block of its event.
 * - `["feed_head"]` → number: the position of the newest event. Every commit
 *   that adds events checks its version and moves it, so commits that add
 *   events are ordered by the store itself.
 * - `["intents", id]` → {@link IntentPointer}: where the intent's event is. Its
 *   absence is what every insert checks, so an id is stored once.
 * - `["templates", id]`, `["policies", id]` → `StoredDocument`
 * - `["config", "runtime"]` → `StoredConfig`
 * - `["intent_batches", ms, seq, writer]`: blocks of the layout before the feed,
 *   moved into the feed when a server starts (`upgrade.ts`).
 *
 * Queue messages: {@link ExpiryMessage}, enqueued with a pending intent and
 * delivered at its deadline.
 * @module
 */

import type { DocumentKind, EventType, StoredIntent } from "../domain/intent.ts";

/** An event as kept in a block; its position follows from the block's key and its index. */
export interface StoredEvent {
  type: EventType;
  intent: StoredIntent;
}

/** Where an intent's event is: the key position of its block and its index in the block. */
export type IntentPointer = [blockKey: number, index: number];

/** Key builders. */
export const keys = {
  intent: (id: string): Deno.KvKey => ["intents", id],
  events: (lastPosition: number): Deno.KvKey => ["events", lastPosition],
  eventsPrefix: ["events"] as Deno.KvKey,
  feedHead: ["feed_head"] as Deno.KvKey,
  document: (kind: DocumentKind, id: string): Deno.KvKey => [
    kind === "template" ? "templates" : "policies",
    id,
  ],
  config: ["config", "runtime"] as Deno.KvKey,
  health: ["health"] as Deno.KvKey,
  earlierBlocksPrefix: ["intent_batches"] as Deno.KvKey,
};

/** The queue message that asks for a pending intent's expiry. */
export interface ExpiryMessage {
  expire: string;
}

/** The queue message for intent `id`'s expiry. */
export function expiryMessage(id: string): ExpiryMessage {
  return { expire: id };
}

/** True when a queue message is an {@link ExpiryMessage}. */
export function isExpiryMessage(value: unknown): value is ExpiryMessage {
  return typeof value === "object" && value !== null &&
    typeof (value as ExpiryMessage).expire === "string";
}

/** True when `value` has the shape of an {@link IntentPointer}. */
export function isPointer(value: unknown): value is IntentPointer {
  return Array.isArray(value) && value.length === 2 &&
    Number.isSafeInteger(value[0]) && value[0] >= 1 &&
    Number.isSafeInteger(value[1]) && value[1] >= 0;
}
