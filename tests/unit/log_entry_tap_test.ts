/**
 * The entry tap (`src/log/entry_tap.ts`): the entries of the events this
 * process moved, by position, as {@link eventEntry} makes them; only a run of
 * consecutive positions, begun again at a gap; the latest ones when full.
 */

import assert from "node:assert/strict";
import type { IntentEvent, StoredIntent } from "../../src/domain/intent.ts";
import { recordSha256OfCanonical } from "../../protocol/log/entry.ts";
import { EntryTap } from "../../src/log/entry_tap.ts";
import { eventEntry } from "../../src/log/integrate.ts";

const intent: StoredIntent = {
  id: "0f8fad5b-d9cb-469f-a165-70867728950e",
  variant: "A",
  refId: "T-1",
  authorship: { kind: "Unsigned", signers: [] },
  body: new TextEncoder().encode(`{"intent":{"id":"0f8fad5b-d9cb-469f-a165-70867728950e"}}`),
  receivedAt: "2026-11-29T10:00:00.000Z",
  state: "accepted",
};

/**
 * The event at `position`: with a stored R of its own; past 100, every third
 * without one, and every third with a malformed one (both made from the record).
 */
function eventAt(position: number): IntentEvent {
  const recordSha256 = recordSha256OfCanonical(new TextEncoder().encode(String(position)));
  if (position > 100 && position % 3 === 1) return { position, type: "intent.expired", intent };
  if (position > 100 && position % 3 === 2) {
    return { position, type: "intent.rejected", intent, recordSha256: `${recordSha256}=` };
  }
  return { position, type: "intent.accepted", intent, recordSha256 };
}

function run(from: number, to: number): IntentEvent[] {
  return Array.from({ length: to - from + 1 }, (_, i) => eventAt(from + i));
}

Deno.test("the tap gives the entries of consecutive positions it took, from any of them", () => {
  const tap = new EntryTap(256);
  assert.deepEqual(tap.entriesAfter(0, 10), []);
  tap.take(run(1, 5));
  tap.take(run(6, 20));
  assert.deepEqual(tap.entriesAfter(0, 100), run(1, 20).map(eventEntry));
  assert.deepEqual(tap.entriesAfter(7, 3), run(8, 10).map(eventEntry));
  assert.deepEqual(tap.entriesAfter(20, 5), []);
  // Events without a stored R: their entries made from the record, as the integrator makes them.
  tap.take(run(21, 100));
  tap.take(run(101, 110));
  assert.deepEqual(tap.entriesAfter(100, 10), run(101, 110).map(eventEntry));
  assert.deepEqual(tap.entriesAfter(0, 200), run(1, 110).map(eventEntry));
});

Deno.test("a gap begins the run again; a full tap keeps the latest", () => {
  const tap = new EntryTap(8);
  tap.take(run(1, 5));
  // Positions 6 to 9 were moved by another process.
  tap.take(run(10, 12));
  assert.deepEqual(tap.entriesAfter(4, 10), []);
  assert.deepEqual(tap.entriesAfter(9, 10), run(10, 12).map(eventEntry));
  tap.take(run(13, 30));
  assert.deepEqual(tap.entriesAfter(21, 100), []);
  assert.deepEqual(tap.entriesAfter(22, 100), run(23, 30).map(eventEntry));
  tap.clear();
  assert.deepEqual(tap.entriesAfter(22, 100), []);
});

Deno.test("an entry longer than a slot is not held, and the run begins after it", () => {
  const tap = new EntryTap(8);
  tap.take(run(1, 3));
  tap.take([{
    ...eventAt(4),
    recordSha256: "R".repeat(43),
    type: "x".repeat(100) as "intent.accepted",
  }]);
  tap.take(run(5, 6));
  assert.deepEqual(tap.entriesAfter(0, 10), []);
  assert.deepEqual(tap.entriesAfter(3, 10), []);
  assert.deepEqual(tap.entriesAfter(4, 10), run(5, 6).map(eventEntry));
});

Deno.test("an event whose entry cannot be made is not held, and the run begins after it", () => {
  const tap = new EntryTap(8);
  tap.take(run(1, 2));
  // No type: the entry's maker refuses it.
  tap.take([{ ...eventAt(3), type: "" as "intent.accepted", recordSha256: undefined }]);
  tap.take(run(4, 5));
  assert.deepEqual(tap.entriesAfter(0, 10), []);
  assert.deepEqual(tap.entriesAfter(3, 10), run(4, 5).map(eventEntry));
});
