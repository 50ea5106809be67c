/**
 * Reading stored intents: one by id (its pointer, then its block), and
 * listings newest first (the feed's blocks in reverse).
 * @module
 */

import { stateAt } from "../domain/governance.ts";
import type { IntentState, StoredIntent } from "../domain/intent.ts";
import type { IntentPage } from "../domain/store.ts";
import { decodeEventAt, decodeIntentValue, decodeStaged, type StoredEvent } from "./codec.ts";
import { feedEntryEvents } from "./feed.ts";
import { decodeStagedPointer } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { readMany } from "./layout.ts";
import { earlierPointer, earlierRecord } from "./take_in.ts";

/**
 * Where the record of a read `["intents", id]` entry is: in the staged block
 * of the commit that wrote the entry (this layout), in the value itself (the
 * staged layout of earlier versions), or in a feed block (the head layout).
 */
type RecordAt =
  | { key: Deno.KvKey; index: number; form: "staged" | "feed" | "earlier" }
  | { intent: StoredIntent }
  | null;

function recordAt(entry: Deno.KvEntryMaybe<unknown>): RecordAt {
  if (entry.versionstamp === null) return null;
  const index = decodeStagedPointer(entry.value);
  if (index !== null) return { key: keys.staged(entry.versionstamp), index, form: "staged" };
  // A version from before the feed, until its block is taken in (`take_in.ts`).
  const earlier = earlierPointer(entry.value);
  if (earlier) return { ...earlier, form: "earlier" };
  const value = decodeIntentValue(entry.value);
  if (!value) return null;
  if (value.record) return { intent: value.record.intent };
  return { key: keys.events(value.pointer[0]), index: value.pointer[1], form: "feed" };
}

/** The record a block read for {@link recordAt} holds, if any. */
function recordIn(
  at: { index: number; form: "staged" | "feed" | "earlier" },
  block: unknown,
): StoredIntent | undefined {
  if (block === null || block === undefined) return undefined;
  if (at.form === "earlier") return earlierRecord(block, at.index);
  if (at.form === "staged") return decodeStaged(block)[at.index]?.intent;
  return decodeEventAt(block, at.index)?.intent;
}

/**
 * Reads one intent by its stored id, with the version of `["intents", id]`
 * (which a commit changing it checks), or null: the entry, then the block
 * its record is in.
 */
export async function getIntentEntry(
  kv: Deno.Kv,
  id: string,
): Promise<{ intent: StoredIntent; version: string } | null> {
  const entry = await kv.get<unknown>(keys.intent(id));
  const at = recordAt(entry);
  if (!at) return null;
  const intent = "intent" in at ? at.intent : recordIn(at, (await kv.get<unknown>(at.key)).value);
  return intent && intent.id === id ? { intent, version: entry.versionstamp! } : null;
}

/** The events below feed position `before` (or all), newest first. */
async function* backwards(
  kv: Deno.Kv,
  before = Infinity,
): AsyncGenerator<{ position: number; event: StoredEvent }> {
  const prefix = keys.eventsPrefix;
  if (before <= 1) return;
  // The block holding position before − 1 is the first keyed at or after it; older ones follow.
  const held = before === Infinity ? [] : await Array.fromAsync(
    kv.list<unknown>({ prefix, start: keys.events(before - 1) }, { limit: 1 }),
  );
  if (before !== Infinity && held.length === 0) return;
  const end = held[0]?.key;
  const older = kv.list<unknown>(end ? { prefix, end } : { prefix }, {
    reverse: true,
    batchSize: 4,
  });
  for (const blocks of [held, older]) {
    for await (const block of blocks) {
      const events = await feedEntryEvents(kv, block);
      for (let i = events.length - 1; i >= 0; i--) if (events[i].position < before) yield events[i];
    }
  }
}

/** Events a listing looks at, at most, before it answers with what it found. */
const SCAN_EVENTS = 5_000;
/** Intents whose current records are read together. */
const CHUNK = 64;
/**
 * The current records of intents stored pending (they change after the event
 * that stored them), read together: their records, or their pointers and
 * then the blocks these point at.
 */
async function current(kv: Deno.Kv, intents: Listed[]): Promise<Listed[]> {
  const pending = intents.filter(({ intent }) => intent.state === "pending");
  if (pending.length === 0) return intents;
  const at = (await readMany(kv, pending.map(({ intent }) => keys.intent(intent.id))))
    .map(recordAt);
  const blockKeys = new Map<string, Deno.KvKey>();
  for (const where of at) {
    if (where && "key" in where) blockKeys.set(JSON.stringify(where.key), where.key);
  }
  const blocks = new Map<string, unknown>();
  for (const entry of await readMany(kv, [...blockKeys.values()])) {
    if (entry.versionstamp !== null) blocks.set(JSON.stringify(entry.key), entry.value);
  }
  const now = new Map<string, StoredIntent>();
  pending.forEach(({ intent }, i) => {
    const where = at[i];
    let latest: StoredIntent | undefined;
    if (where && "intent" in where) latest = where.intent;
    else if (where) latest = recordIn(where, blocks.get(JSON.stringify(where.key)));
    if (latest?.id === intent.id) now.set(intent.id, latest);
  });
  return intents.map((listed) => {
    const latest = now.get(listed.intent.id);
    return latest ? { intent: latest, position: listed.position } : listed;
  });
}

/** An intent found in the feed, with the position of the event that stored it. */
interface Listed {
  intent: StoredIntent;
  position: number;
}

/**
 * True for the event that stored its intent: a staged commit marks it; in
 * earlier versions' head-moving commits, the record says the position of the
 * event that stored it.
 */
function isFirst(event: StoredEvent, position: number): boolean {
  return event.first === true || event.intent.position === position;
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
  const items: Listed[] = [];
  let scanned = 0;
  let chunk: Listed[] = [];
  /** Takes the chunk's intents as they stand now; the page when it is full (or the scan long). */
  const settle = async (): Promise<IntentPage | null> => {
    for (const listed of await current(kv, chunk)) {
      if (state !== undefined && stateAt(listed.intent, now) !== state) continue;
      if (items.length === limit) return page(items, items[limit - 1].position);
      items.push(listed);
    }
    const last = chunk.at(-1);
    chunk = [];
    if (scanned >= SCAN_EVENTS && last && last.position > 1) return page(items, last.position);
    return null;
  };
  for await (const { position, event } of backwards(kv, options.before)) {
    // An intent is listed at the event that stored it, as it stands now.
    if (!isFirst(event, position)) continue;
    chunk.push({ intent: event.intent, position });
    scanned++;
    // A page without a filter needs one intent past the limit to know there is more.
    if (chunk.length === CHUNK || (state === undefined && items.length + chunk.length > limit)) {
      const page = await settle();
      if (page) return page;
    }
  }
  return await settle() ?? page(items, null);
}

function page(items: readonly Listed[], next: number | null): IntentPage {
  return { items: items.map(({ intent }) => intent), next };
}
