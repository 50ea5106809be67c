/**
 * Reading stored intents: one by id (its pointer, then its block), and
 * listings newest first (the feed's blocks in reverse).
 * @module
 */

import { stateAt } from "../domain/governance.ts";
import type { IntentState, StoredIntent } from "../domain/intent.ts";
import type { IntentPage } from "../domain/store.ts";
import { isPointer, keys, type StoredEvent } from "./keys.ts";

/** Reads one intent by its stored id, with the version of its pointer, or null. */
export async function getIntentEntry(
  kv: Deno.Kv,
  id: string,
): Promise<{ intent: StoredIntent; version: string } | null> {
  const pointer = await kv.get<unknown>(keys.intent(id));
  if (!isPointer(pointer.value)) return null;
  const [blockKey, index] = pointer.value;
  const block = await kv.get<StoredEvent[]>(keys.events(blockKey));
  const intent = block.value?.[index]?.intent;
  return intent && intent.id === id ? { intent, version: pointer.versionstamp! } : null;
}

/** The events below feed position `before` (or all), newest first. */
async function* backwards(
  kv: Deno.Kv,
  before: number | undefined,
): AsyncGenerator<{ position: number; event: StoredEvent }> {
  const prefix = keys.eventsPrefix;
  let end: Deno.KvKey | undefined;
  if (before !== undefined) {
    if (before <= 1) return;
    // The block holding position before − 1 is the first keyed at or after it.
    const listed = kv.list<StoredEvent[]>({ prefix, start: keys.events(before - 1) }, { limit: 1 });
    for await (const block of listed) {
      const first = (block.key[1] as number) - block.value.length + 1;
      for (let i = before - 1 - first; i >= 0; i--) {
        yield { position: first + i, event: block.value[i] };
      }
      end = block.key;
    }
    if (end === undefined) return;
  }
  const blocks = kv.list<StoredEvent[]>(end ? { prefix, end } : { prefix }, {
    reverse: true,
    batchSize: 4,
  });
  for await (const block of blocks) {
    const first = (block.key[1] as number) - block.value.length + 1;
    for (let i = block.value.length - 1; i >= 0; i--) {
      yield { position: first + i, event: block.value[i] };
    }
  }
}

/** Events a listing looks at, at most, before it answers with what it found. */
const SCAN_EVENTS = 5_000;
/** Intents whose current records are read together. */
const CHUNK = 64;
/** Keys per `getMany` (Deno KV reads at most 10 at a time). */
const MANY = 10;

/** Reads `keys` ten at a time, all at once. */
async function getMany<T>(kv: Deno.Kv, keysToRead: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
  const reads: Promise<Deno.KvEntryMaybe<T>[]>[] = [];
  for (let i = 0; i < keysToRead.length; i += MANY) {
    reads.push(kv.getMany<T[]>(keysToRead.slice(i, i + MANY)));
  }
  return (await Promise.all(reads)).flat();
}

/**
 * The current records of intents stored pending (they change after the event
 * that stored them), read together: their pointers, then their blocks.
 */
async function current(kv: Deno.Kv, intents: StoredIntent[]): Promise<StoredIntent[]> {
  const pending = intents.filter((intent) => intent.state === "pending");
  if (pending.length === 0) return intents;
  const pointers = await getMany<unknown>(kv, pending.map((intent) => keys.intent(intent.id)));
  const blockKeys = new Map<number, Deno.KvKey>();
  for (const pointer of pointers) {
    if (isPointer(pointer.value)) blockKeys.set(pointer.value[0], keys.events(pointer.value[0]));
  }
  const blocks = new Map<number, StoredEvent[]>();
  const read = await getMany<StoredEvent[]>(kv, [...blockKeys.values()]);
  for (const entry of read) if (entry.value) blocks.set(entry.key[1] as number, entry.value);
  const now = new Map<string, StoredIntent>();
  pending.forEach((intent, i) => {
    const pointer = pointers[i].value;
    const latest = isPointer(pointer) ? blocks.get(pointer[0])?.[pointer[1]]?.intent : undefined;
    if (latest?.id === intent.id) now.set(intent.id, latest);
  });
  return intents.map((intent) => now.get(intent.id) ?? intent);
}

/**
 * Lists intents newest first (by the feed position of the event that stored
 * each), as they stand now, starting below feed position `before` when
 * given. The caller checks that `before` is a position the feed handed out.
 *
 * @param options.limit page size.
 * @param options.state only intents in this state at `now`.
 * @returns the page, and the position to pass as `before` for the next one
 *   (null once the listing reached the first intent). With `state`, a page
 *   may hold fewer than `limit` intents and still have a next one: a listing
 *   looks at a bounded number of events per page.
 */
export async function listIntents(
  kv: Deno.Kv,
  options: { limit: number; before?: number; state?: IntentState; now: Date },
): Promise<IntentPage> {
  const { limit, state, now } = options;
  const items: StoredIntent[] = [];
  let scanned = 0;
  let chunk: StoredIntent[] = [];
  /** Takes the chunk's intents as they stand now; the page when it is full (or the scan long). */
  const settle = async (): Promise<IntentPage | null> => {
    for (const intent of await current(kv, chunk)) {
      if (state !== undefined && stateAt(intent, now) !== state) continue;
      if (items.length === limit) return { items, next: items[limit - 1].position };
      items.push(intent);
    }
    const last = chunk.at(-1);
    chunk = [];
    if (scanned >= SCAN_EVENTS && last && last.position > 1) return { items, next: last.position };
    return null;
  };
  for await (const { position, event } of backwards(kv, options.before)) {
    // An intent is listed at the event that stored it, as it stands now.
    if (event.intent.position !== position) continue;
    chunk.push(event.intent);
    scanned++;
    // A page without a filter needs one intent past the limit to know there is more.
    if (chunk.length === CHUNK || (state === undefined && items.length + chunk.length > limit)) {
      const page = await settle();
      if (page) return page;
    }
  }
  return await settle() ?? { items, next: null };
}
