/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the exact text a client signs
 * (docs/interface.md §3), written by one writer for the service and its
 * clients alike. Strings and numbers are written as `JSON.stringify` writes
 * them, which is what RFC 8785 §3.2.2 prescribes; members are sorted by
 * UTF-16 code units (the order of `<` on strings and of `Array#sort`, §3.2.3). The writer walks the
 * value with an explicit stack, so any depth is safe.
 *
 * {@link canonicalJson} first checks that the value is plain JSON, because
 * `JSON.stringify` silently drops or rewrites what JSON cannot hold, and a
 * signature must never cover a silently altered value.
 * @module
 */

const encoder = new TextEncoder();

/**
 * The RFC 8785 canonical JSON text of a JSON value: members sorted by UTF-16
 * code units, no white space, ECMAScript number and string serialisation.
 *
 * @param value null, a boolean, a finite number, a well-formed string, or an
 *   array or plain object of such values.
 * @returns the canonical JSON text.
 * @throws {TypeError} for anything JSON cannot represent exactly: non-finite
 *   numbers, `undefined`, functions, symbols, bigints, strings with lone
 *   surrogates, sparse arrays, objects that are not plain, and cycles.
 *
 * @example
 * ```ts
 * canonicalJson({ b: [1e21, -0], a: "€" }); // '{"a":"€","b":[1e+21,0]}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value);
  return decoder.decode(writeOut(value));
}

/**
 * The UTF-8 bytes of {@link canonicalJson}: the bytes a client signs.
 *
 * @param value a JSON value, as for {@link canonicalJson}.
 * @returns UTF-8 of the canonical JSON text.
 * @throws {TypeError} as {@link canonicalJson}.
 *
 * @example
 * ```ts
 * canonicalBytes({ a: 1 }); // Uint8Array of '{"a":1}'
 * ```
 */
export function canonicalBytes(value: unknown): Uint8Array<ArrayBuffer> {
  assertJsonValue(value);
  return writeOut(value).slice();
}

/**
 * {@link canonicalBytes} of a value known to be plain JSON: one the strict
 * reader produced (no cycle, nothing but plain objects, arrays, finite
 * numbers and well-formed strings) or `JSON.parse` of a record's stored body.
 * It skips the checks; a member whose value is `undefined` is left out, as
 * `JSON.stringify` leaves it out.
 *
 * @param value a value the strict reader produced.
 * @returns UTF-8 of the canonical JSON text.
 *
 * @example
 * ```ts
 * canonicalBytesOfParsed(JSON.parse('{"b":1,"a":[2]}')); // Uint8Array of '{"a":[2],"b":1}'
 * ```
 */
export function canonicalBytesOfParsed(value: unknown): Uint8Array<ArrayBuffer> {
  return writeOut(value).slice();
}

/**
 * {@link canonicalBytesOfParsed} of `value`, and within the same bytes those
 * of `inner`, an object inside it (or `value` itself): JCS writes a member's
 * value as it writes that value alone, so a request's text holds its signed
 * object's, written once.
 *
 * @param value a value the strict reader produced.
 * @param inner an object of `value` (by identity).
 * @returns the canonical bytes of `value`, and a view of those of `inner`
 *   (null when `value` does not hold it).
 *
 * @example
 * ```ts
 * const request = JSON.parse('{"sig":"s","intent":{"y":2,"x":1}}');
 * const { bytes, inner } = canonicalBytesWithin(request, request.intent);
 * // bytes: UTF-8 of '{"intent":{"x":1,"y":2},"sig":"s"}'; inner: of '{"x":1,"y":2}'
 * ```
 */
export function canonicalBytesWithin(
  value: unknown,
  inner: object,
): { bytes: Uint8Array<ArrayBuffer>; inner: Uint8Array<ArrayBuffer> | null } {
  return session(() => {
    const mark = marked = { object: inner, start: -1, end: -1 };
    write(value);
    const bytes = out.slice(0, at);
    return { bytes, inner: mark.end < 0 ? null : bytes.subarray(mark.start, mark.end) };
  });
}

/**
 * {@link canonicalBytesOfParsed} with each object that `known` holds given as
 * the bytes it maps to, copied in place (a request's JCS, written before, in
 * its record): the whole text in one view of the writer's buffer, for a
 * caller that hashes it at once. The view is valid until the next call of
 * this module's writers.
 *
 * @param value a value the strict reader produced.
 * @param known canonical bytes already written, by the object they are of (none: the value's
 *   text alone).
 *
 * @example
 * ```ts
 * const request = new TextEncoder().encode('{"x":1}');
 * const placeholder = {};
 * canonicalViewOfParsed({ b: placeholder, a: 0 }, new Map([[placeholder, request]]));
 * // a view of UTF-8 of '{"a":0,"b":{"x":1}}'
 * ```
 */
export function canonicalViewOfParsed(
  value: unknown,
  known?: ReadonlyMap<unknown, Uint8Array>,
): Uint8Array {
  return writeOut(value, known);
}

/**
 * The writer's output: bytes reused by every call (none of which awaits),
 * grown as a text needs, given back to the collector past {@link KEEP_BYTES}.
 */
let out = new Uint8Array(8_192);
let at = 0;
/** The object whose text {@link canonicalBytesWithin} asks for, and where it was written. */
let marked: { object: object; start: number; end: number } | undefined;
const KEEP_BYTES = 1 << 20;
const decoder = new TextDecoder();

/** True while a text is being written. */
let writing = false;

/**
 * Runs one write from the buffer's start, then lets a buffer grown for a
 * very large text go (a view of it stays valid). A write begun while one
 * is under way (a getter of the value writing JCS) gets a buffer of its
 * own, and the one under way is kept as it was.
 */
function session<T>(run: () => T): T {
  if (writing) {
    const saved = { out, at, marked };
    out = new Uint8Array(8_192);
    at = 0;
    marked = undefined;
    try {
      return run();
    } finally {
      ({ out, at, marked } = saved);
    }
  }
  writing = true;
  at = 0;
  try {
    return run();
  } finally {
    writing = false;
    marked = undefined;
    if (out.length > KEEP_BYTES) out = new Uint8Array(8_192);
  }
}

/** The value's canonical text in the buffer (a view, valid until the next write). */
function writeOut(
  value: unknown,
  known?: ReadonlyMap<unknown, Uint8Array>,
): Uint8Array<ArrayBuffer> {
  return session(() => {
    write(value, known);
    return out.subarray(0, at);
  });
}

/** Room for `n` more bytes. */
function room(n: number): void {
  if (at + n <= out.length) return;
  const bigger = new Uint8Array(Math.max(out.length * 2, at + n));
  bigger.set(out.subarray(0, at));
  out = bigger;
}

/** One byte. */
function byte(value: number): void {
  room(1);
  out[at++] = value;
}

/** Text known to be ASCII (punctuation, numbers, literals). */
function ascii(text: string): void {
  room(text.length);
  for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
}

/**
 * A string as `JSON.stringify` writes it, in UTF-8: printable ASCII without
 * a quote or backslash byte for byte, anything else through `JSON.stringify`.
 */
function string(value: string): void {
  room(value.length + 2);
  const start = at;
  out[at++] = 0x22;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      at = start;
      utf8(JSON.stringify(value));
      return;
    }
    out[at++] = c;
  }
  out[at++] = 0x22;
}

/** Any text, in UTF-8 (JSON.stringify's output has no lone surrogate). */
function utf8(text: string): void {
  room(text.length * 3);
  at += encoder.encodeInto(text, out.subarray(at)).written;
}

/** A member's value that is not a container. */
function scalar(value: unknown): void {
  if (typeof value === "string") string(value);
  else ascii(JSON.stringify(value) ?? "null");
}

/** Bytes written before, copied in. */
function copy(bytes: Uint8Array): void {
  room(bytes.length);
  out.set(bytes, at);
  at += bytes.length;
}

/** An open container: its members' names in order (`null` for an array) and the next one. */
interface Frame {
  container: Record<string, unknown> | unknown[];
  names: string[] | null;
  next: number;
  count: number;
  /** Members written so far. */
  written: number;
}

function frameOf(value: object): Frame {
  if (Array.isArray(value)) {
    return { container: value, names: null, next: 0, count: value.length, written: 0 };
  }
  const names = sortedNames(Object.keys(value));
  const container = value as Record<string, unknown>;
  return { container, names, next: 0, count: names.length, written: 0 };
}

/** Objects this small are sorted in place by insertion: `Array#sort` copies its array first. */
const SMALL_OBJECT = 16;

/** `names` sorted by UTF-16 code units (what `<` on strings compares), in place. */
function sortedNames(names: string[]): string[] {
  if (names.length > SMALL_OBJECT) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i];
    let j = i - 1;
    for (; j >= 0 && names[j] > name; j--) names[j + 1] = names[j];
    names[j + 1] = name;
  }
  return names;
}

/**
 * The writer: a loop over a stack of open containers, so the depth is
 * bounded by memory only, writing from `at` on; each object `known` holds
 * is given as its bytes, copied in place.
 */
function write(root: unknown, known?: ReadonlyMap<unknown, Uint8Array>): void {
  if (typeof root !== "object" || root === null) return scalar(root);
  const rootBytes = known?.get(root);
  if (rootBytes !== undefined) return copy(rootBytes);
  let frame = frameOf(root);
  if (root === marked?.object) marked.start = at;
  byte(frame.names === null ? 0x5b : 0x7b);
  const open: Frame[] = [];
  for (;;) {
    if (frame.next < frame.count) {
      const i = frame.next++;
      let member: unknown;
      if (frame.names === null) {
        member = (frame.container as unknown[])[i];
        if (frame.written++ > 0) byte(0x2c);
      } else {
        const name = frame.names[i];
        member = (frame.container as Record<string, unknown>)[name];
        if (member === undefined) continue;
        if (frame.written++ > 0) byte(0x2c);
        string(name);
        byte(0x3a);
      }
      if (typeof member !== "object" || member === null) {
        scalar(member);
      } else if (known?.has(member)) {
        copy(known.get(member)!);
      } else {
        open.push(frame);
        frame = frameOf(member);
        if (member === marked?.object && marked.start < 0) marked.start = at;
        byte(frame.names === null ? 0x5b : 0x7b);
      }
      continue;
    }
    byte(frame.names === null ? 0x5d : 0x7d);
    if (frame.container === marked?.object && marked.end < 0) marked.end = at;
    const parent = open.pop();
    if (parent === undefined) return;
    frame = parent;
  }
}

/**
 * Walks the value with an explicit stack (no recursion, so any depth is
 * safe) and throws TypeError at the first part JSON cannot represent.
 * `open` holds the containers on the current path, to detect cycles while
 * still allowing the same object to appear twice side by side.
 */
function assertJsonValue(root: unknown): void {
  const open = new Set<object>();
  // A container is pushed once to enter it and once more (as `exit`) to
  // leave it, so `open` holds exactly the path from the root.
  const work: { value: unknown; exit: boolean }[] = [{ value: root, exit: false }];
  while (work.length > 0) {
    const { value, exit } = work.pop()!;
    if (exit) {
      open.delete(value as object);
      continue;
    }
    switch (typeof value) {
      case "boolean":
        continue;
      case "number":
        if (!Number.isFinite(value)) {
          throw new TypeError("JSON cannot represent a non-finite number");
        }
        continue;
      case "string":
        if (!value.isWellFormed()) throw new TypeError("JSON text may not hold a lone surrogate");
        continue;
      case "object":
        break;
      default:
        throw new TypeError(`JSON cannot represent a value of type ${typeof value}`);
    }
    if (value === null) continue;
    if (open.has(value)) throw new TypeError("JSON cannot represent a cyclic value");
    open.add(value);
    work.push({ value, exit: true });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        if (!(i in value)) throw new TypeError("JSON cannot represent a sparse array");
        work.push({ value: value[i], exit: false });
      }
      continue;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      // Dates, Maps, class instances and boxed primitives would be
      // serialised through toJSON or dropped to `{}`.
      throw new TypeError("JSON cannot represent an object that is not a plain object");
    }
    if (Object.getOwnPropertySymbols(value).length > 0) {
      throw new TypeError("JSON cannot represent a symbol-keyed member");
    }
    for (const key of Object.keys(value)) {
      work.push({ value: (value as Record<string, unknown>)[key], exit: false });
      if (!key.isWellFormed()) throw new TypeError("JSON text may not hold a lone surrogate");
    }
  }
}
