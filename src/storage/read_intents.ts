/**
 * Reading stored intents: one by id (its pointer, then its block), and
 * listings newest first (the feed's blocks in reverse).
 * @module
 */

import type { StoredIntent } from "../domain/intent.ts";
import type { IntentPage } from "../domain/store.ts";
import { isPointer, keys, type StoredEvent } from "./keys.ts";

/** Reads one intent by its stored id, or null. */
export async function getIntent(kv: Deno.Kv, id: string): Promise<StoredIntent | null> {
  const pointer = await kv.get<unknown>(keys.intent(id));
  if (!isPointer(pointer.value)) return null;
  const [blockKey, index] = pointer.value;
  const block = await kv.get<StoredEvent[]>(keys.events(blockKey));
  const intent = block.value?.[index]?.intent;
  return intent && intent.id === id ? intent : null;
}

/**
 * Lists intents newest first, starting below feed position `before` when
 * given. The caller checks that `before` is a position the feed handed out.
 *
 * @param options.limit page size.
 * @returns the page, and the position to pass as `before` for the next one.
 */
export async function listIntents(
  kv: Deno.Kv,
  options: { limit: number; before?: number },
): Promise<IntentPage> {
  const { limit, before } = options;
  const items: StoredIntent[] = [];
  let more = false;
  /** Takes the events of `block` from index `from` down; false once the page is full. */
  const take = (block: StoredEvent[], from: number): boolean => {
    for (let index = from; index >= 0; index--) {
      if (items.length === limit) {
        more = true;
        return false;
      }
      items.push(block[index].intent);
    }
    return true;
  };
  const prefix = keys.eventsPrefix;
  let end: Deno.KvKey | undefined;
  if (before !== undefined && before > 1) {
    // The block holding position before − 1 is the first keyed at or after it.
    for await (
      const block of kv.list<StoredEvent[]>(
        { prefix, start: keys.events(before - 1) },
        { limit: 1 },
      )
    ) {
      const last = block.key[1] as number;
      const first = last - block.value.length + 1;
      take(block.value, before - 1 - first);
      end = block.key;
    }
  }
  if (!more && !(before !== undefined && end === undefined)) {
    // Blocks hold one event or more: limit + 1 blocks fill the page and show what lies beyond.
    const blocks = kv.list<StoredEvent[]>(end ? { prefix, end } : { prefix }, {
      reverse: true,
      limit: limit + 1,
      batchSize: 4,
    });
    for await (const block of blocks) {
      if (!take(block.value, block.value.length - 1)) break;
    }
  }
  const last = items.at(-1);
  return { items, next: more && last ? last.position : null };
}
