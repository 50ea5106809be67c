/**
 * Checks that the stored intents and the feed are whole, reading KV directly:
 * what the crash, race and group-commit tests assert after the fact.
 * @module
 */

import type { StoredIntent } from "../../src/domain/intent.ts";
import {
  decodeBlock,
  decodeIntentValue,
  decodeStaged,
  type StoredEvent,
} from "../../src/storage/codec.ts";
import { encodeRecord, isCurrentLayout } from "../../tools/store_upgrade/earlier_layouts.ts";
import { decodeFeedHead, decodeIndex, decodeStagedPointer } from "../../src/storage/index_codec.ts";
import { keys } from "../../src/storage/keys.ts";
import { countedDocument, storedIntentCountedKeys } from "../../src/storage/document_counts.ts";
import { sleep } from "./time.ts";

/**
 * Checks the layout: the feed's indexes and blocks (of earlier versions too)
 * hold positions 1 to the head with no gap and no repeat, naming each staged
 * block up to the head's once and in commit order, the head key names the
 * last one, what is staged after it follows in commit order, each intent is
 * stored by one event (the first of its id) and changed only by later events,
 * every intent's `["intents", id]` leads to (or, as earlier versions wrote it,
 * holds) its latest event's record, nothing of the layout before the feed is left,
 * each pending intent has its due expiry, and each key's pending count is
 * what is pending.
 *
 * @param options.staged "follows" (the default): staged events count as
 *   following the feed, in commit order; "none": nothing may still be staged.
 * @returns every stored intent as its storing event holds it, in feed order.
 * @throws {Error} naming the first inconsistency.
 */
export async function auditIntents(
  kv: Deno.Kv,
  options: { staged?: "none" | "follows" } = {},
): Promise<StoredIntent[]> {
  // Its reads are not one snapshot: a move of staged events into the feed made meanwhile (by a
  // store's sequencer) changes the head, and the audit is made again.
  for (let attempt = 1;; attempt++) {
    const before = (await kv.get(keys.feedHead)).versionstamp;
    try {
      const intents = await auditOnce(kv, options);
      if ((await kv.get(keys.feedHead)).versionstamp === before) return intents;
    } catch (error) {
      if ((await kv.get(keys.feedHead)).versionstamp === before || attempt >= 20) throw error;
    }
    await sleep(10);
  }
}

async function auditOnce(
  kv: Deno.Kv,
  options: { staged?: "none" | "follows" },
): Promise<StoredIntent[]> {
  const created = new Set<string>();
  const latest = new Map<string, { at: string; event: StoredEvent }>();
  const current = new Map<string, StoredIntent>();
  const intents: StoredIntent[] = [];
  const take = (event: StoredEvent, position: number, at: string) => {
    const { intent } = event;
    if (event.first === true || intent.position === position) {
      // The event that stored the intent: once per id.
      if (created.has(intent.id)) throw new Error(`intent ${intent.id} is stored twice`);
      created.add(intent.id);
      intents.push(intent);
    } else if (!created.has(intent.id)) {
      throw new Error(`event ${position} changes intent ${intent.id} before it was stored`);
    }
    latest.set(intent.id, { at, event });
    current.set(intent.id, intent);
  };
  // Every staged block, in commit order: those up to the head's `through` are in the feed, once
  // each and in that order; those after it follow.
  const stagedBlocks: { versionstamp: string; value: unknown }[] = [];
  for await (const entry of kv.list<unknown>({ prefix: keys.stagedPrefix })) {
    stagedBlocks.push({ versionstamp: entry.key[1] as string, value: entry.value });
  }
  const head = await kv.get<unknown>(keys.feedHead);
  const { position: headAt, form, through } = decodeFeedHead(head.value);
  let indexed = 0;
  let last = 0;
  for await (const block of kv.list<unknown>({ prefix: keys.eventsPrefix })) {
    const key = block.key[1] as number;
    if (!(block.value instanceof Uint8Array)) throw new Error(`block ${key} is not bytes`);
    const refs = decodeIndex(block.value);
    const events: { event: StoredEvent; at: string }[] = [];
    if (refs) {
      for (const ref of refs) {
        const staged = stagedBlocks[indexed++];
        if (staged?.versionstamp !== ref.versionstamp) {
          throw new Error(`index ${key} names staged block ${ref.versionstamp} out of turn`);
        }
        const held = decodeStaged(staged.value);
        if (held.length !== ref.count) throw new Error(`index ${key} miscounts a staged block`);
        held.forEach((event, i) => events.push({ event, at: `${ref.versionstamp}/${i}` }));
      }
    } else {
      decodeBlock(block.value).forEach((event, i) =>
        events.push({ event, at: JSON.stringify([key, i]) })
      );
    }
    if (events.length === 0) throw new Error(`block ${key} holds no events`);
    if (key - events.length !== last) {
      throw new Error(`block ${key} does not follow position ${last}`);
    }
    events.forEach(({ event, at }, index) => take(event, last + index + 1, at));
    last = key;
  }
  if (headAt !== last) throw new Error(`the head is ${headAt}, the feed ends at ${last}`);
  if ((stagedBlocks[indexed - 1]?.versionstamp ?? "") !== (indexed === 0 ? "" : through)) {
    throw new Error("the head does not name the last staged block in the feed");
  }
  let staged = 0;
  for (const entry of stagedBlocks.slice(indexed)) {
    if (form !== "staged") throw new Error("events are staged in a store whose head is a KvU64");
    if (options.staged === "none") throw new Error("events are still staged");
    decodeStaged(entry.value).forEach((event, i) =>
      take(event, ++staged + last, `${entry.versionstamp}/${i}`)
    );
  }
  let entries = 0;
  for await (const entry of kv.list<unknown>({ prefix: ["intents"] })) {
    const id = entry.key[1] as string;
    const found = latest.get(id);
    const index = decodeStagedPointer(entry.value);
    if (index !== null) {
      if (found?.at !== `${entry.versionstamp}/${index}`) {
        throw new Error(`the entry of intent ${id} is not its latest event's`);
      }
      entries++;
      continue;
    }
    const value = decodeIntentValue(entry.value);
    if (!isCurrentLayout(entry.value) || !value) throw new Error(`intent ${id} has no record`);
    const leads = value.pointer
      ? found?.at === JSON.stringify(value.pointer)
      : found !== undefined &&
        equalBytes(
          encodeRecord({ type: found.event.type, intent: found.event.intent }),
          encodeRecord({ type: value.record.type, intent: value.record.intent }),
        );
    if (!leads) throw new Error(`the entry of intent ${id} is not its latest event's`);
    entries++;
  }
  if (entries !== latest.size) throw new Error("an intent has no entry");
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
    const doc = countedDocument(intent);
    for (const signer of storedIntentCountedKeys(intent)) {
      const key = keys.pendingBySigner(doc.kind, doc.id, signer);
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
  // Counts per document: each of its keys as the per-key counts of earlier versions would.
  for await (const entry of kv.list<unknown>({ prefix: ["pending_counts"] })) {
    const [, kind, documentId] = entry.key as [string, "template" | "policy", string];
    const counts = JSON.parse(new TextDecoder().decode(entry.value as Uint8Array));
    for (const [signer, count] of Object.entries(counts)) {
      const id = JSON.stringify(keys.pendingBySigner(kind, documentId, signer));
      if (count !== expected.get(id)) {
        throw new Error(`pending count ${id} is ${count}, ${expected.get(id) ?? 0} are pending`);
      }
      expected.delete(id);
    }
  }
  if (expected.size > 0) throw new Error(`pending counts missing: ${[...expected.keys()]}`);
  return intents;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
}
