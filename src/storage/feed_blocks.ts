/**
 * Reading the feed's values (`["events", last]`): a feed index names the
 * staged blocks whose events hold those positions, read where their commits
 * wrote them; a block of earlier versions holds its events itself. Both are
 * read here, so every reader of the feed sees one thing: runs of events,
 * each ending at its key's position.
 * @module
 */

import { blockLength, decodeBlock, decodeStaged, type StoredEvent } from "./codec.ts";
import { decodeIndex, type StagedRef } from "./index_codec.ts";
import { keys } from "./keys.ts";
import { readMany } from "./read_many.ts";

/** How many events a feed value holds, without reading what it names. */
export function feedValueLength(value: unknown): number {
  const refs = decodeIndex(value);
  return refs ? refs.reduce((sum, ref) => sum + ref.count, 0) : blockLength(value);
}

/**
 * The events of a feed value from index `from` on, at most `limit` of them
 * (all without one): read from the staged blocks an index names, only those
 * the range needs.
 *
 * @throws {LayoutError} for a value of no known layout, or an index naming a
 *   staged block that is not there.
 */
export async function feedValueEvents(
  kv: Deno.Kv,
  value: unknown,
  from = 0,
  limit = Infinity,
): Promise<StoredEvent[]> {
  const refs = decodeIndex(value);
  if (!refs) {
    const events = decodeBlock(value, from);
    return limit < events.length ? events.slice(0, limit) : events;
  }
  const needed: { ref: StagedRef; skip: number }[] = [];
  let start = 0;
  let wanted = 0;
  for (const ref of refs) {
    const end = start + ref.count;
    if (end > from && wanted < limit) {
      const skip = Math.max(0, from - start);
      needed.push({ ref, skip });
      wanted += ref.count - skip;
    }
    start = end;
  }
  const read = await readMany(kv, needed.map(({ ref }) => keys.staged(ref.versionstamp)));
  const events: StoredEvent[] = [];
  needed.forEach(({ skip }, i) => {
    for (const event of decodeStaged(read[i].value).slice(skip)) {
      if (events.length < limit) events.push(event);
    }
  });
  return events;
}
