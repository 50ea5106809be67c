/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the exact text a client signs
 * (docs/interface.md §3), written by one writer for the service and its
 * clients alike. Strings and numbers are written as `JSON.stringify` writes
 * them, which is what RFC 8785 §3.2.2 prescribes; members are sorted by
 * UTF-16 code units (`Array#sort`'s own order, §3.2.3). The writer walks the
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
  return write(value);
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
  return encoder.encode(canonicalJson(value));
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
  return encoder.encode(write(value));
}

/**
 * {@link canonicalBytesOfParsed} in parts, where each object that `known`
 * holds is given as the canonical bytes it maps to, not written again: a
 * caller that wrote a part before (the signed object of a request) hashes
 * the parts without joining them.
 *
 * @param value a value the strict reader produced.
 * @param known canonical bytes already written (in parts), by the object they are of.
 * @returns parts whose concatenation is the canonical JSON text's UTF-8.
 *
 * @example
 * ```ts
 * const inner = JSON.parse('{"y":2,"x":1}');
 * const known = new Map([[inner, [new TextEncoder().encode('{"x":1,"y":2}')]]]);
 * canonicalPartsOfParsed({ b: inner, a: 0 }, known);
 * // UTF-8 of '{"a":0,"b":', '{"x":1,"y":2}' and '}'
 * ```
 */
export function canonicalPartsOfParsed(
  value: unknown,
  known: ReadonlyMap<unknown, readonly Uint8Array[]>,
): Uint8Array[] {
  const parts: Uint8Array[] = [];
  parts.push(encoder.encode(write(value, { known, parts })));
  return parts;
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
  const names = Object.keys(value).sort();
  const container = value as Record<string, unknown>;
  return { container, names, next: 0, count: names.length, written: 0 };
}

/** Parts written before, and where the writer puts them (see {@link canonicalPartsOfParsed}). */
interface Spliced {
  known: ReadonlyMap<unknown, readonly Uint8Array[]>;
  /** The parts so far: the text before each known object's parts, then them. */
  parts: Uint8Array[];
}

/**
 * The writer: a loop over a stack of open containers, so the depth is
 * bounded by memory only. With `spliced`, the text before each known object
 * goes to its parts, then the object's own, and it returns the text after the last.
 */
function write(root: unknown, spliced?: Spliced): string {
  if (typeof root !== "object" || root === null) return JSON.stringify(root);
  const rootParts = spliced?.known.get(root);
  if (rootParts !== undefined) {
    spliced!.parts.push(...rootParts);
    return "";
  }
  let frame = frameOf(root);
  let text = frame.names === null ? "[" : "{";
  const open: Frame[] = [];
  for (;;) {
    if (frame.next < frame.count) {
      const i = frame.next++;
      let member: unknown;
      if (frame.names === null) {
        member = (frame.container as unknown[])[i];
        if (frame.written++ > 0) text += ",";
      } else {
        const name = frame.names[i];
        member = (frame.container as Record<string, unknown>)[name];
        if (member === undefined) continue;
        if (frame.written++ > 0) text += ",";
        text += JSON.stringify(name) + ":";
      }
      if (typeof member !== "object" || member === null) {
        text += JSON.stringify(member);
      } else if (spliced?.known.has(member)) {
        spliced.parts.push(encoder.encode(text), ...spliced.known.get(member)!);
        text = "";
      } else {
        open.push(frame);
        frame = frameOf(member);
        text += frame.names === null ? "[" : "{";
      }
      continue;
    }
    text += frame.names === null ? "]" : "}";
    const parent = open.pop();
    if (parent === undefined) return text;
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
