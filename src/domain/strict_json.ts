/**
 * The strict JSON reader for request bodies and passkey client data
 * (CONTRACT §3, §4).
 *
 * A text is decoded as UTF-8, checked by a single validating scan that
 * enforces the rules `JSON.parse` does not (duplicate member names, lone
 * surrogate escapes, nesting depth, integers that JCS would write otherwise,
 * overflowing numbers, no BOM), and only then handed to `JSON.parse` to
 * build the value. The scan uses an explicit stack, so no input can overflow
 * the call stack, and it stops at the first container deeper than the limit.
 * @module
 */

import { firstInvalidUtf8Offset, utf8Offset } from "./_utf8_offsets.ts";

/**
 * Thrown for any body that is not strict JSON. `message` is safe to send to
 * the client: it states what is wrong and where (byte offset), and never
 * echoes the input. `hint` is an optional extra sentence for the client.
 *
 * @example
 * ```ts
 * try {
 *   parseStrictJson(new TextEncoder().encode('{"a":1,"a":2}'));
 * } catch (e) {
 *   if (e instanceof StrictJsonError) console.log(e.message, e.offset);
 *   // "Cannot parse JSON at byte 7: duplicate member name" 7
 * }
 * ```
 */
export class StrictJsonError extends SyntaxError {
  override name = "StrictJsonError";
  /** Byte offset into the body where the problem was found. */
  readonly offset: number;
  /** What is wrong, without the offset: for callers that word their own message. */
  readonly reason: string;
  /** An optional extra sentence telling the client what to do instead. */
  readonly hint?: string;

  /**
   * @param offset byte offset of the problem in the body.
   * @param reason what is wrong, without any input text.
   * @param hint optional extra sentence for the client.
   */
  constructor(offset: number, reason: string, hint?: string) {
    super(`Cannot parse JSON at byte ${offset}: ${reason}`);
    this.offset = offset;
    this.reason = reason;
    if (hint !== undefined) this.hint = hint;
  }
}

/** Default nesting limit: the top-level container counts as depth 1. */
const DEFAULT_MAX_DEPTH = 32;

const UNSAFE_INTEGER_HINT = "send such numbers as strings";

// Character codes used by the scanner.
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_E = 0x65;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BOM = 0xfeff;

/** A scan failure at a UTF-16 index; converted to a byte offset by the caller. */
class ScanError {
  constructor(readonly index: number, readonly reason: string, readonly hint?: string) {}
}

// `fatal` makes malformed UTF-8 (including encoded surrogates) an error
// instead of U+FFFD; `ignoreBOM` keeps a leading BOM in the text so the
// scanner can reject it rather than silently dropping it.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses UTF-8 bytes as strict JSON: RFC 8259 grammar, no BOM, nothing after
 * the value except JSON white space, plus the service's rules (CONTRACT §3).
 * Member names such as `__proto__` become ordinary own data properties; the
 * result deep-equals what `JSON.parse` gives for the same text.
 *
 * @param bytes the UTF-8 text: a request body, or passkey client data.
 * @param options `maxDepth`: deepest allowed nesting of arrays and objects
 *   (default 32; the top-level container is depth 1).
 * @returns the parsed JSON value.
 * @throws {StrictJsonError} for invalid UTF-8, a BOM, a grammar error, a
 *   duplicate member name, a lone surrogate escape, nesting deeper than
 *   `maxDepth`, an integer literal outside ±(2^53−1) that is not how JCS
 *   writes the number it parses to, or a number literal that overflows to
 *   infinity.
 * @throws {RangeError} when `maxDepth` is not a positive integer.
 *
 * @example
 * ```ts
 * parseStrictJson(new TextEncoder().encode('{"id": 1}')); // { id: 1 }
 * ```
 */
export function parseStrictJson(
  bytes: Uint8Array,
  options: { maxDepth?: number } = {},
): unknown {
  return readStrictJson(bytes, options).value;
}

/** What {@link readStrictJson} read. */
export interface StrictJson {
  value: unknown;
  /**
   * True when the text is written as `JSON.stringify` writes the value read:
   * no white space outside strings, every number as JCS writes it, and only
   * the escapes `JSON.stringify` uses (`\"`, `\\`, the short control escapes,
   * `\u00xx` for the other control characters). Then the bytes already are the
   * compact text of exactly that value, fit to be kept as they are.
   */
  compact: boolean;
}

/**
 * {@link parseStrictJson}, telling also whether the text is compact (see
 * {@link StrictJson.compact}).
 *
 * @throws {StrictJsonError} as {@link parseStrictJson}.
 */
export function readStrictJson(
  bytes: Uint8Array,
  options: { maxDepth?: number } = {},
): StrictJson {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1) {
    throw new RangeError("maxDepth must be a positive integer");
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new StrictJsonError(firstInvalidUtf8Offset(bytes), "invalid UTF-8");
  }
  compact = true;
  try {
    scan(text, maxDepth);
  } catch (e) {
    if (!(e instanceof ScanError)) throw e;
    const offset = e.index >= text.length ? bytes.length : utf8Offset(text, e.index);
    throw new StrictJsonError(offset, e.reason, e.hint);
  }
  // The scan accepted a subset of what JSON.parse accepts, so this cannot
  // throw; JSON.parse defines members with CreateDataProperty, so
  // `__proto__` stays an own data property.
  return { value: JSON.parse(text), compact };
}

/**
 * Whether the text being scanned is compact so far: set by `readStrictJson`,
 * cleared by the scan (which is synchronous, so no two scans share it).
 */
let compact = true;

/**
 * Validates `text` as one strict JSON value. Iterative: `stack` holds, per
 * open container, `null` for an array or the member names seen so far for
 * an object.
 */
function scan(text: string, maxDepth: number): void {
  const length = text.length;
  const stack: (Set<string> | null)[] = [];
  let i = skipWhiteSpace(text, 0);
  if (text.charCodeAt(0) === BOM) throw new ScanError(0, "byte order mark is not allowed");

  for (;;) {
    // Expecting a value at i.
    let c = text.charCodeAt(i);
    if (c === OPEN_BRACE) {
      if (stack.length >= maxDepth) throw tooDeep(i, maxDepth);
      i = skipWhiteSpace(text, i + 1);
      if (text.charCodeAt(i) === CLOSE_BRACE) {
        i++;
      } else {
        const names = new Set<string>();
        i = scanMemberName(text, i, names);
        stack.push(names);
        continue;
      }
    } else if (c === OPEN_BRACKET) {
      if (stack.length >= maxDepth) throw tooDeep(i, maxDepth);
      i = skipWhiteSpace(text, i + 1);
      if (text.charCodeAt(i) === CLOSE_BRACKET) {
        i++;
      } else {
        stack.push(null);
        continue;
      }
    } else if (c === QUOTE) {
      i = scanString(text, i);
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      i = scanNumber(text, i);
    } else if (c === 0x74 /* t */ && text.startsWith("true", i)) {
      i += 4;
    } else if (c === 0x66 /* f */ && text.startsWith("false", i)) {
      i += 5;
    } else if (c === 0x6e /* n */ && text.startsWith("null", i)) {
      i += 4;
    } else {
      throw i >= length ? endOfInput(i) : new ScanError(i, "expected a JSON value");
    }

    // After a complete value: close containers or move to the next element.
    for (;;) {
      i = skipWhiteSpace(text, i);
      if (stack.length === 0) {
        if (i < length) throw new ScanError(i, "unexpected data after the JSON value");
        return;
      }
      const names = stack[stack.length - 1];
      c = text.charCodeAt(i);
      if (c === COMMA) {
        i = skipWhiteSpace(text, i + 1);
        if (names !== null) i = scanMemberName(text, i, names);
        break;
      }
      if (names === null ? c === CLOSE_BRACKET : c === CLOSE_BRACE) {
        stack.pop();
        i++;
        continue;
      }
      if (i >= length) throw endOfInput(i);
      throw new ScanError(i, names === null ? "expected ',' or ']'" : "expected ',' or '}'");
    }
  }
}

/**
 * Scans `"name" :` at i, records the unescaped name in `names` (rejecting a
 * repeat), and returns the index of the member's value.
 */
function scanMemberName(text: string, i: number, names: Set<string>): number {
  if (text.charCodeAt(i) !== QUOTE) {
    throw i >= text.length ? endOfInput(i) : new ScanError(i, "expected a member name");
  }
  const end = scanString(text, i);
  // Names are compared after unescaping: "a" and "\u0061" are the same name.
  const name = sawEscape ? JSON.parse(text.slice(i, end)) as string : text.slice(i + 1, end - 1);
  if (names.has(name)) throw new ScanError(i, "duplicate member name");
  names.add(name);
  const colon = skipWhiteSpace(text, end);
  if (text.charCodeAt(colon) !== COLON) {
    throw colon >= text.length ? endOfInput(colon) : new ScanError(colon, "expected ':'");
  }
  return skipWhiteSpace(text, colon + 1);
}

/** Whether the string most recently scanned by {@link scanString} had an escape. */
let sawEscape = false;

/** Scans the string literal starting at the quote at i; returns the index after its closing quote. */
function scanString(text: string, i: number): number {
  const length = text.length;
  sawEscape = false;
  i++;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      sawEscape = true;
      i = scanEscape(text, i);
    } else if (c >= SPACE) {
      i++;
    } else {
      // A raw control character (RFC 8259 §7), or NaN past the end of input.
      if (i >= length) throw endOfInput(i);
      throw new ScanError(i, "control character in string");
    }
  }
}

/** Scans the escape sequence at the backslash at i; returns the index after it. */
function scanEscape(text: string, i: number): number {
  const c = text.charCodeAt(i + 1);
  switch (c) {
    case 0x2f: // /
      // JSON.stringify writes "/" unescaped.
      compact = false;
      return i + 2;
    case QUOTE:
    case BACKSLASH:
    case 0x62: // b
    case 0x66: // f
    case 0x6e: // n
    case 0x72: // r
    case 0x74: // t
      return i + 2;
    case LOWER_U: {
      const unit = hex4(text, i + 2);
      if (unit < 0) throw new ScanError(i, "invalid \\u escape");
      // JSON.stringify writes \u only for the control characters that have no
      // short escape, with lower-case hex.
      if (compact && !isStringifyEscape(text, i, unit)) compact = false;
      if (unit >= 0xdc00 && unit <= 0xdfff) throw loneSurrogate(i);
      if (unit >= 0xd800 && unit <= 0xdbff) {
        // A high surrogate must be followed at once by an escaped low one.
        if (text.charCodeAt(i + 6) !== BACKSLASH || text.charCodeAt(i + 7) !== LOWER_U) {
          throw loneSurrogate(i);
        }
        const low = hex4(text, i + 8);
        if (low < 0) throw new ScanError(i + 6, "invalid \\u escape");
        if (low < 0xdc00 || low > 0xdfff) throw loneSurrogate(i);
        return i + 12;
      }
      return i + 6;
    }
    default:
      if (i + 1 >= text.length) throw endOfInput(i + 1);
      throw new ScanError(i, "invalid escape sequence");
  }
}

/** True when the `\u` escape at i of `unit` is the one `JSON.stringify` writes. */
function isStringifyEscape(text: string, i: number, unit: number): boolean {
  if (unit >= 0x20 || unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c) {
    return false;
  }
  if (unit === 0x0d) return false;
  return text.slice(i + 2, i + 6) === unit.toString(16).padStart(4, "0");
}

/** The value of four hex digits at i, or -1 when they are not four hex digits. */
function hex4(text: string, i: number): number {
  let value = 0;
  for (let k = i; k < i + 4; k++) {
    const c = text.charCodeAt(k);
    let digit: number;
    if (c >= ZERO && c <= NINE) digit = c - ZERO;
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x57; // a-f
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x37; // A-F
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * Scans the number literal at i (RFC 8259 §6 grammar) and checks its value;
 * returns the index after it.
 */
function scanNumber(text: string, i: number): number {
  const start = i;
  let c = text.charCodeAt(i);
  if (c === MINUS) c = text.charCodeAt(++i);
  if (c === ZERO) {
    c = text.charCodeAt(++i);
  } else if (c >= ZERO + 1 && c <= NINE) {
    do c = text.charCodeAt(++i); while (c >= ZERO && c <= NINE);
  } else {
    throw i >= text.length ? endOfInput(i) : new ScanError(start, "invalid number");
  }
  let integer = true;
  let exponent = false;
  if (c === DOT) {
    integer = false;
    c = text.charCodeAt(++i);
    if (!(c >= ZERO && c <= NINE)) throw new ScanError(start, "invalid number");
    do c = text.charCodeAt(++i); while (c >= ZERO && c <= NINE);
  }
  if (c === LOWER_E || c === UPPER_E) {
    integer = false;
    exponent = true;
    c = text.charCodeAt(++i);
    if (c === PLUS || c === MINUS) c = text.charCodeAt(++i);
    if (!(c >= ZERO && c <= NINE)) throw new ScanError(start, "invalid number");
    do c = text.charCodeAt(++i); while (c >= ZERO && c <= NINE);
  }
  // Most literals need no conversion: an integer of up to 15 digits is
  // safe, and without an exponent it takes over 300 digits to overflow.
  if (integer) {
    if (i - start > 15) checkLargeInteger(text.slice(start, i), start);
    // An integer literal is written as JCS writes it, but for negative zero.
    else if (
      i - start === 2 && text.charCodeAt(start) === MINUS && text.charCodeAt(i - 1) === ZERO
    ) {
      compact = false;
    }
  } else if ((exponent || i - start > 300) && !Number.isFinite(Number(text.slice(start, i)))) {
    throw new ScanError(start, "number literal overflows to infinity");
  } else if (compact) {
    const literal = text.slice(start, i);
    if (String(Number(literal)) !== literal) compact = false;
  }
  return i;
}

/**
 * An integer literal outside ±(2^53−1) is accepted only when it is exactly
 * how JCS (ECMAScript Number::toString) writes the double it parses to, as
 * `JSON.stringify(1e20)` gives `100000000000000000000`. Any other such
 * literal names an integer a double cannot hold: a client holding the exact
 * integer would sign other bytes than the value read here canonicalizes to.
 * Beyond 1e21 Number::toString uses an exponent, and an overflow gives
 * "Infinity", so neither ever matches a digit run.
 */
function checkLargeInteger(literal: string, start: number): void {
  const value = Number(literal);
  // Rounding is monotonic and 2^53 is exact, so a literal beyond 2^53−1
  // converts to a double beyond it too, and one within converts exactly.
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER && String(value) !== literal) {
    throw new ScanError(
      start,
      "integer literal outside ±(2^53−1) that is not how JCS writes its value",
      UNSAFE_INTEGER_HINT,
    );
  }
}

function skipWhiteSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
    compact = false;
    i++;
  }
}

function tooDeep(i: number, maxDepth: number): ScanError {
  return new ScanError(i, `nesting deeper than ${maxDepth}`);
}

function loneSurrogate(i: number): ScanError {
  return new ScanError(i, "lone UTF-16 surrogate escape");
}

function endOfInput(i: number): ScanError {
  return new ScanError(i, "unexpected end of input");
}
