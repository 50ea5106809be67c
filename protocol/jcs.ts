/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the exact text a client signs
 * (docs/interface.md §3). Serialisation is done by the `canonicalize` package; this
 * module first checks that the value is plain JSON, because `canonicalize`
 * (like `JSON.stringify`) silently drops or rewrites what JSON cannot hold,
 * and a signature must never cover a silently altered value.
 * @module
 */

import canonicalize from "canonicalize";

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
  const text = canonicalize(value);
  // Unreachable after the check above; kept so the return type is honest.
  if (text === undefined) throw new TypeError("value has no JSON representation");
  return text;
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
 * reader produced (`strict_json.ts`: no cycle, nothing but plain objects,
 * arrays, finite numbers and well-formed strings, at most 32 levels deep) or
 * `JSON.parse` of a record's stored body. It skips the checks and writes the
 * text itself: strings and numbers as `JSON.stringify` writes them, which is
 * what RFC 8785 §3.2.2 prescribes, members sorted by UTF-16 code units
 * (`Array#sort`'s own order, §3.2.3).
 *
 * @param value a value the strict reader produced.
 * @returns UTF-8 of the canonical JSON text.
 */
export function canonicalBytesOfParsed(value: unknown): Uint8Array<ArrayBuffer> {
  return encoder.encode(writeParsed(value));
}

function writeParsed(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) text += (i === 0 ? "" : ",") + writeParsed(value[i]);
    return text + "]";
  }
  const object = value as Record<string, unknown>;
  const names = Object.keys(object).sort();
  let text = "{";
  for (let i = 0; i < names.length; i++) {
    text += (i === 0 ? "" : ",") + JSON.stringify(names[i]) + ":" + writeParsed(object[names[i]]);
  }
  return text + "}";
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
