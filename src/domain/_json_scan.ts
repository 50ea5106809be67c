/**
 * The validating scan behind the strict JSON reader (`strict_json.ts`): one
 * pass over the text with an explicit stack, so no input can overflow the
 * call stack, that stops at the first problem and tells whether the text is
 * compact.
 * @module
 */

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

/**
 * The member names of the objects open, as the scan keeps them to find a
 * repeat: an object whose names are unescaped and at most
 * {@link SHORT_NAMES} keeps them as ranges of the text (no string made), on
 * one stack of `[start, end)` pairs shared by the open objects (a nested
 * object's pairs sit above its parent's until it closes); any other object
 * keeps its names, unescaped, in a set. The stack of containers holds, per
 * object, where its pairs begin, or its set; per array, {@link ARRAY}.
 */
type Names = number | Set<string>;
const SHORT_NAMES = 16;
/** An array on the stack of open containers. */
const ARRAY = -1;

/** A scan failure at a UTF-16 index; converted to a byte offset by the caller. */
export class ScanError {
  constructor(readonly index: number, readonly reason: string, readonly hint?: string) {}
}

/**
 * One scan of one text: {@link JsonScan.run} validates it as one strict JSON
 * value, and {@link JsonScan.compact} then says whether it is written as
 * `JSON.stringify` writes the value (see `StrictJson.compact`).
 */
export class JsonScan {
  /** Whether the text is compact so far: cleared as the scan finds otherwise. */
  compact = true;
  /** The top of {@link RANGES} for this scan. */
  #top = 0;
  /** Whether the string last scanned holds an escape. */
  #escaped = false;

  constructor(readonly text: string) {}

  /**
   * Validates `text` as one strict JSON value. Iterative: `stack` holds, per
   * open container, `null` for an array or the member names seen so far for
   * an object.
   */
  run(maxDepth: number): void {
    const text = this.text;
    const length = text.length;
    const stack: Names[] = [];
    let i = this.skip(0);
    if (text.charCodeAt(0) === BOM) throw new ScanError(0, "byte order mark is not allowed");

    for (;;) {
      // Expecting a value at i.
      let c = text.charCodeAt(i);
      if (c === OPEN_BRACE) {
        if (stack.length >= maxDepth) throw tooDeep(i, maxDepth);
        i = this.skip(i + 1);
        if (text.charCodeAt(i) === CLOSE_BRACE) {
          i++;
        } else {
          stack.push(this.#top);
          i = this.memberName(i, stack);
          continue;
        }
      } else if (c === OPEN_BRACKET) {
        if (stack.length >= maxDepth) throw tooDeep(i, maxDepth);
        i = this.skip(i + 1);
        if (text.charCodeAt(i) === CLOSE_BRACKET) {
          i++;
        } else {
          stack.push(ARRAY);
          continue;
        }
      } else if (c === QUOTE) {
        i = this.string(i);
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        i = this.number(i);
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
        i = this.skip(i);
        if (stack.length === 0) {
          if (i < length) throw new ScanError(i, "unexpected data after the JSON value");
          return;
        }
        const names = stack[stack.length - 1];
        const array = names === ARRAY;
        c = text.charCodeAt(i);
        if (c === COMMA) {
          i = this.skip(i + 1);
          if (!array) i = this.memberName(i, stack);
          break;
        }
        if (array ? c === CLOSE_BRACKET : c === CLOSE_BRACE) {
          // An object's ranges go with it: its parent's are on top again.
          if (typeof names === "number" && !array) this.#top = names;
          stack.pop();
          i++;
          continue;
        }
        if (i >= length) throw endOfInput(i);
        throw new ScanError(i, array ? "expected ',' or ']'" : "expected ',' or '}'");
      }
    }
  }

  /**
   * Scans `"name" :` at i, records the name for the object on top of
   * `stack` (rejecting a repeat), and returns the index of the member's value.
   */
  memberName(i: number, stack: Names[]): number {
    const text = this.text;
    if (text.charCodeAt(i) !== QUOTE) {
      throw i >= text.length ? endOfInput(i) : new ScanError(i, "expected a member name");
    }
    this.#escaped = false;
    const end = this.string(i);
    const last = stack.length - 1;
    let names = stack[last];
    if (typeof names === "number") {
      const count = (this.#top - names) / 2;
      if (!this.#escaped && count < SHORT_NAMES) {
        for (let k = names; k < this.#top; k += 2) {
          if (sameText(text, RANGES[k], RANGES[k + 1], i + 1, end - 1)) {
            throw new ScanError(i, "duplicate member name");
          }
        }
        RANGES[this.#top++] = i + 1;
        RANGES[this.#top++] = end - 1;
        return this.#colon(end);
      }
      // An escaped name, or one name too many: this object's names go to a set.
      const set = new Set<string>();
      for (let k = names; k < this.#top; k += 2) set.add(text.slice(RANGES[k], RANGES[k + 1]));
      this.#top = names;
      stack[last] = names = set;
    }
    // Names are compared after unescaping: "a" and "\u0061" are the same name.
    const name = this.#escaped
      ? JSON.parse(text.slice(i, end)) as string
      : text.slice(i + 1, end - 1);
    if (names.has(name)) throw new ScanError(i, "duplicate member name");
    names.add(name);
    return this.#colon(end);
  }

  /** Scans the `:` after a member name ending at `end`; returns the index of the member's value. */
  #colon(end: number): number {
    const text = this.text;
    const colon = this.skip(end);
    if (text.charCodeAt(colon) !== COLON) {
      throw colon >= text.length ? endOfInput(colon) : new ScanError(colon, "expected ':'");
    }
    return this.skip(colon + 1);
  }

  /**
   * Scans the string literal starting at the quote at i; returns the index
   * after its closing quote.
   */
  string(i: number): number {
    const text = this.text;
    const length = text.length;
    i++;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) return i + 1;
      if (c === BACKSLASH) {
        i = this.escape(i);
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
  escape(i: number): number {
    const text = this.text;
    this.#escaped = true;
    const c = text.charCodeAt(i + 1);
    switch (c) {
      case 0x2f: // /
        // JSON.stringify writes "/" unescaped.
        this.compact = false;
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
        if (this.compact && !isStringifyEscape(text, i, unit)) this.compact = false;
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

  /**
   * Scans the number literal at i (RFC 8259 §6 grammar) and checks its value;
   * returns the index after it.
   */
  number(i: number): number {
    const text = this.text;
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
        this.compact = false;
      }
    } else if ((exponent || i - start > 300) && !Number.isFinite(Number(text.slice(start, i)))) {
      throw new ScanError(start, "number literal overflows to infinity");
    } else if (this.compact) {
      const literal = text.slice(start, i);
      if (String(Number(literal)) !== literal) this.compact = false;
    }
    return i;
  }

  skip(i: number): number {
    const text = this.text;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
      this.compact = false;
      i++;
    }
  }
}

/** True when the `\u` escape at i of `unit` is the one `JSON.stringify` writes. */
function isStringifyEscape(text: string, i: number, unit: number): boolean {
  // Not one with a short escape (\b \t \n \f \r), nor a character written as it is.
  if (unit >= 0x20 || (unit >= 0x08 && unit <= 0x0d && unit !== 0x0b)) return false;
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

function tooDeep(i: number, maxDepth: number): ScanError {
  return new ScanError(i, `nesting deeper than ${maxDepth}`);
}

function loneSurrogate(i: number): ScanError {
  return new ScanError(i, "lone UTF-16 surrogate escape");
}

function endOfInput(i: number): ScanError {
  return new ScanError(i, "unexpected end of input");
}

/**
 * The ranges of member names of the objects open ({@link Names}), shared by
 * every scan (a scan runs to its end without a pause): at most
 * {@link SHORT_NAMES} pairs an open object, so it stays small.
 */
const RANGES: number[] = [];

/** Whether `text` holds the same characters at `[a, aEnd)` and `[b, bEnd)`. */
function sameText(text: string, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (; a < aEnd; a++, b++) if (text.charCodeAt(a) !== text.charCodeAt(b)) return false;
  return true;
}
