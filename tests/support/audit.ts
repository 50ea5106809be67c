/**
 * Checks that the stored intents and the feed are whole, reading KV directly:
 * what the crash, race and group-commit tests assert after the fact.
 * @module
 */

import type { StoredIntent } from "../../src/domain/intent.ts";
import {
  blockLength,
  decodeBlock,
  decodeHead,
  decodePointer,
  isCurrentLayout,
} from "../../src/storage/codec.ts";
import { keys } from "../../src/storage/keys.ts";
import { storedIntentCountKeys } from "../../src/storage/pending_counts.ts";

/**
 * Checks the layout: the feed's blocks hold positions 1 to the head with no
 * gap and no repeat, the head key names the last one, each intent is stored
 * by one event that carries its position and changed only by later events,
 * every pointer leads to its intent's latest event and every intent has its
 * pointer, nothing of the layout before the feed is left, each pending intent
 * has its due expiry, and each key's pending count is what is pending.
 *
 * @returns every stored intent as its storing event holds it, in feed order.
 * @throws {Error} naming the first inconsistency.
 */
export async function auditIntents(kv: Deno.Kv): Promise<StoredIntent[]> {
  const created = new Set<string>();
  const latest = new Map<string, string>();
  const current = new Map<string, StoredIntent>();
  const intents: StoredIntent[] = [];
  let last = 0;
  for await (const block of kv.list<unknown>({ prefix: keys.eventsPrefix })) {
    const key = block.key[1] as number;
    if (!(block.value instanceof Uint8Array) || blockLength(block.value) === 0) {
      throw new Error(`block ${key} is not bytes holding events`);
    }
    const events = decodeBlock(block.value);
    if (key - events.length !== last) {
      throw new Error(`block ${key} does not follow position ${last}`);
    }
    events.forEach((event, index) => {
      const { intent } = event;
      const position = last + index + 1;
      if (intent.position === position) {
        // The event that stored the intent: once per id.
        if (created.has(intent.id)) throw new Error(`intent ${intent.id} is stored twice`);
        created.add(intent.id);
        intents.push(intent);
      } else if (!created.has(intent.id) || intent.position > position) {
        throw new Error(`event ${position} changes intent ${intent.id} before it was stored`);
      }
      // The pointer leads to the latest event of each intent.
      latest.set(intent.id, JSON.stringify([key, index]));
      current.set(intent.id, intent);
    });
    last = key;
  }
  const head = await kv.get<unknown>(keys.feedHead);
  if (head.versionstamp !== null && !(head.value instanceof Deno.KvU64)) {
    throw new Error("the head is not a KvU64");
  }
  if (decodeHead(head.value) !== last) {
    throw new Error(`the head is ${decodeHead(head.value)}, the feed ends at ${last}`);
  }
  let pointers = 0;
  for await (const entry of kv.list<unknown>({ prefix: ["intents"] })) {
    const id = entry.key[1] as string;
    const pointer = decodePointer(entry.value);
    if (!isCurrentLayout(entry.value) || !pointer) throw new Error(`intent ${id} has no pointer`);
    if (latest.get(id) !== JSON.stringify(pointer)) {
      throw new Error(`the pointer of intent ${id} does not lead to it`);
    }
    pointers++;
  }
  if (pointers !== latest.size) throw new Error("an intent has no pointer");
  for await (const _ of kv.list({ prefix: keys.earlierBlocksPrefix }, { limit: 1 })) {
    throw new Error("blocks of the layout before the feed are left");
  }
  // Every value is bytes or a KvU64: readable by any Deno version and other KV clients.
  for await (const entry of kv.list<unknown>({ prefix: [] })) {
    if (!isCurrentLayout(entry.value)) {
      throw new Error(`the value of ${JSON.stringify(entry.key)} is a JavaScript value`);
    }
  }
  // Each pending intent has its expiry's due work, and nothing else has any.
  const due = new Set<string>();
  for await (const entry of kv.list<unknown>({ prefix: keys.duePrefix("expire") })) {
    const [, , at, id] = entry.key as [string, string, number, string];
    const intent = current.get(id);
    if (intent?.state !== "pending" || Date.parse(intent.approval!.expiresAt) !== at) {
      throw new Error(`due work ${JSON.stringify(entry.key)} is for no pending intent`);
    }
    due.add(id);
  }
  for (const [id, intent] of current) {
    if (intent.state === "pending" && !due.has(id)) {
      throw new Error(`pending intent ${id} has no due expiry`);
    }
  }
  // Each key's pending count is the number of counted intents pending under it, and no count is 0.
  const expected = new Map<string, number>();
  for (const intent of current.values()) {
    if (intent.state !== "pending" || !intent.counted) continue;
    for (const key of storedIntentCountKeys(intent)) {
      const id = JSON.stringify(key);
      expected.set(id, (expected.get(id) ?? 0) + 1);
    }
  }
  for await (const entry of kv.list<unknown>({ prefix: ["pending_by_signer"] })) {
    const id = JSON.stringify(entry.key);
    const count = entry.value instanceof Deno.KvU64 ? Number(entry.value.value) : NaN;
    if (count !== expected.get(id)) {
      throw new Error(`pending count ${id} is ${count}, ${expected.get(id) ?? 0} are pending`);
    }
    expected.delete(id);
  }
  if (expected.size > 0) throw new Error(`pending counts missing: ${[...expected.keys()]}`);
  return intents;
}
