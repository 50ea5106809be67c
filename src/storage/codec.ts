/**
 * Events as bytes (layouts in `keys.ts`), never V8-serialized values; the
 * decoders also read what earlier versions wrote, JavaScript values
 * included, until `deno task store-upgrade` rewrites them.
 * @module
 */

import type { EventType, StoredIntent } from "../domain/intent.ts";

/** An event as kept in a block; its position follows from the block's key and its index. */
export interface StoredEvent {
  type: EventType;
  intent: StoredIntent;
  /** True for the event that stored the intent (earlier versions' records say `position`). */
  first?: boolean;
  /** `R` of its log entry, when computed as it was stored (`recordSha256Of`). */
  recordSha256?: string;
}

/** Where an earlier version's intent is: the key position of its block and its index in it. */
type IntentPointer = [blockKey: number, index: number];

/** The first byte of a block of earlier versions. */
export const BLOCK_LAYOUT = 1;
/** The first byte of a staged block. */
const STAGED_LAYOUT = 3;
/** A staged block's bytes before its events: the layout, the time of staging and the count. */
export const STAGED_HEADER_BYTES = 11;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Strict UTF-8: a value that is not is not one of ours. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** Thrown when a stored value has none of the layouts the store writes or wrote. */
export class LayoutError extends Error {
  override name = "LayoutError";
}

/** A stored pointer (UTF-8 JSON, or an earlier version's array), or null when none or malformed. */
export function decodePointer(value: unknown): IntentPointer | null {
  let p = value;
  if (value instanceof Uint8Array) {
    try {
      p = JSON.parse(decoder.decode(value));
    } catch {
      return null;
    }
  }
  const ok = Array.isArray(p) && p.length === 2 && Number.isSafeInteger(p[0]) && p[0] >= 1 &&
    Number.isSafeInteger(p[1]) && p[1] >= 0;
  return ok ? p as IntentPointer : null;
}

/**
 * The record's fields an event's JSON holds: all but the body, each named,
 * so that a field added to `StoredIntent` and not written here is a type
 * error (its value may be undefined: then it is left out).
 */
type MetaFields = { [F in Exclude<keyof StoredIntent, "body">]: StoredIntent[F] };

/**
 * The JSON of an event without its body: `{"type":…,"intent":{…}}`, the
 * record's fields as `StoredIntent` names them (one `JSON.stringify`, which
 * leaves out what is undefined).
 */
function eventMeta(event: StoredEvent): string {
  const i = event.intent;
  const intent: MetaFields = {
    id: i.id,
    variant: i.variant,
    refId: i.refId,
    authorship: i.authorship,
    receivedAt: i.receivedAt,
    position: i.position,
    state: i.state,
    approval: i.approval,
    counted: i.counted,
  };
  return JSON.stringify({
    type: event.type,
    first: event.first ? true : undefined,
    recordSha256: event.recordSha256 || undefined,
    intent,
  });
}

/** The byte ranges of a block's events: where each one's JSON and body lie. */
interface EventSpan {
  meta: [start: number, end: number];
  body: [start: number, end: number];
}

function spans(bytes: Uint8Array, start = 1): EventSpan[] {
  if (start === 1 && (bytes.byteLength < 1 || bytes[0] !== BLOCK_LAYOUT)) {
    throw new LayoutError("a block has an unknown layout");
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: EventSpan[] = [];
  let at = start;
  while (at < bytes.byteLength) {
    if (at + 4 > bytes.byteLength) throw new LayoutError("a block ends inside an event");
    const metaEnd = at + 4 + view.getUint32(at);
    if (metaEnd + 4 > bytes.byteLength) throw new LayoutError("a block ends inside an event");
    const bodyEnd = metaEnd + 4 + view.getUint32(metaEnd);
    if (bodyEnd > bytes.byteLength) throw new LayoutError("a block ends inside an event");
    out.push({ meta: [at + 4, metaEnd], body: [metaEnd + 4, bodyEnd] });
    at = bodyEnd;
  }
  return out;
}

function eventAt(bytes: Uint8Array, span: EventSpan): StoredEvent {
  let meta: {
    type: EventType;
    first?: boolean;
    recordSha256?: unknown;
    intent: Omit<StoredIntent, "body">;
  };
  try {
    meta = JSON.parse(strictDecoder.decode(bytes.subarray(span.meta[0], span.meta[1])));
  } catch {
    throw new LayoutError("an event of a block is not JSON");
  }
  // A view into the value read: the body is read-only from here on.
  const body = bytes.subarray(span.body[0], span.body[1]);
  const event: StoredEvent = { type: meta.type, intent: { ...meta.intent, body } };
  if (meta.first === true) event.first = true;
  // Checked where it is used (the log's integration), which computes it again if malformed.
  if (typeof meta.recordSha256 === "string") event.recordSha256 = meta.recordSha256;
  return event;
}

/**
 * The events of a stored block, from index `from` on (up to `to`).
 *
 * @throws {LayoutError} for a value of no known layout.
 */
export function decodeBlock(value: unknown, from = 0, to?: number): StoredEvent[] {
  if (value instanceof Uint8Array) {
    return spans(value).slice(from, to).map((s) => eventAt(value, s));
  }
  // Written by an earlier version as an array of events.
  if (Array.isArray(value)) return (value as StoredEvent[]).slice(from, to);
  throw new LayoutError("a block has an unknown layout");
}

/** How many events a stored block holds. */
export function blockLength(value: unknown): number {
  if (value instanceof Uint8Array) return spans(value).length;
  if (Array.isArray(value)) return value.length;
  throw new LayoutError("a block has an unknown layout");
}

/** The event at `index` of a stored block, or undefined when it has none there. */
export function decodeEventAt(value: unknown, index: number): StoredEvent | undefined {
  const known = value instanceof Uint8Array || Array.isArray(value);
  return known ? decodeBlock(value, index, index + 1)[0] : undefined;
}

/**
 * Events staged by one commit (`["feed_staged", versionstamp]`, as `keys.ts`
 * documents): the header, then per event a 32-bit big-endian length and its
 * JSON without the body, and a 32-bit big-endian length and the body.
 */
export function encodeStaged(events: readonly StoredEvent[], atMs: number): Uint8Array {
  const metas = events.map(eventMeta);
  // UTF-8 takes at most three bytes per UTF-16 unit.
  let size = STAGED_HEADER_BYTES;
  events.forEach((event, i) => size += 8 + 3 * metas[i].length + event.intent.body.byteLength);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out[0] = STAGED_LAYOUT;
  view.setBigUint64(1, BigInt(Math.max(0, Math.floor(atMs))));
  view.setUint16(9, events.length);
  let at = STAGED_HEADER_BYTES;
  events.forEach(({ intent: { body } }, i) => {
    const { written } = encoder.encodeInto(metas[i], out.subarray(at + 4));
    view.setUint32(at, written);
    view.setUint32(at + 4 + written, body.byteLength);
    out.set(body, at + 8 + written);
    at += 8 + written + body.byteLength;
  });
  // Deno KV stores a view's own bytes.
  return out.subarray(0, at);
}

/** What a staged block holds, without decoding its events. */
export interface StagedBlock {
  /** When it was staged (Unix ms, the stager's clock). */
  atMs: number;
  /** How many events it holds. */
  count: number;
  /** The events' frames, as a block holds them after its first byte. */
  frames: Uint8Array;
}

/**
 * Reads a staged block's header.
 *
 * @throws {LayoutError} for a value of another layout.
 */
export function readStaged(value: unknown): StagedBlock {
  if (
    !(value instanceof Uint8Array) || value.byteLength < STAGED_HEADER_BYTES ||
    value[0] !== STAGED_LAYOUT
  ) {
    throw new LayoutError("a staged block has an unknown layout");
  }
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
  return {
    atMs: Number(view.getBigUint64(1)),
    count: view.getUint16(9),
    frames: value.subarray(STAGED_HEADER_BYTES),
  };
}

/** The events of a staged block. */
export function decodeStaged(value: unknown): StoredEvent[] {
  const { frames } = readStaged(value);
  return spans(frames, 0).map((s) => eventAt(frames, s));
}

/**
 * What `["intents", id]` held in earlier versions: the intent's current
 * record (the frame of the one event that left it so, byte 0 = 0, the high
 * byte of a length under 64 KiB) or a pointer to its latest event.
 */
type IntentValue =
  | { record: StoredEvent; pointer?: undefined }
  | { pointer: IntentPointer; record?: undefined };

/** A stored `["intents", id]` value, or null when there is none (absent or malformed). */
export function decodeIntentValue(value: unknown): IntentValue | null {
  if (value instanceof Uint8Array && value.byteLength > 0 && value[0] === 0) {
    const [span] = spans(value, 0);
    return span ? { record: eventAt(value, span) } : null;
  }
  const pointer = decodePointer(value);
  return pointer ? { pointer } : null;
}

/** What each event adds to a block besides its JSON and body: two lengths. */
export const EVENT_FRAME_BYTES = 8;

/** The value of a due-work entry: everything it says is in its key. */
export const NO_DATA: Uint8Array = new Uint8Array(0);
