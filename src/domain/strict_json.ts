/**
 * The strict JSON reader for request bodies and passkey client data
 * (docs/interface.md §3, §4): UTF-8, one validating scan (`_json_scan.ts`) for
 * the rules `JSON.parse` does not enforce, then `JSON.parse` builds the value;
 * as a request body, its refusal becomes the client's `invalid_json`.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { JsonScan, ScanError } from "./_json_scan.ts";

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
 *   if (!(e instanceof StrictJsonError)) throw e;
 *   e.message; // "Cannot parse JSON at byte 7: duplicate member name"
 *   e.offset; // 7
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

// `fatal` makes malformed UTF-8 (including encoded surrogates) an error
// instead of U+FFFD; `ignoreBOM` keeps a leading BOM in the text so the
// scanner can reject it rather than silently dropping it.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/**
 * Where `bytes` stop being well-formed UTF-8: where the lenient decoder puts
 * its first U+FFFD that the bytes do not spell (EF BF BD), as everything
 * before it decoded as it is written.
 */
function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let offset = 0;
  for (const char of lenient.decode(bytes)) {
    const code = char.codePointAt(0)!;
    const spelled = bytes[offset] === 0xef && bytes[offset + 1] === 0xbf &&
      bytes[offset + 2] === 0xbd;
    if (code === 0xfffd && !spelled) break;
    offset += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return offset;
}

/**
 * Parses UTF-8 bytes as strict JSON: RFC 8259 grammar, no BOM, nothing after
 * the value except JSON white space, plus the service's rules (docs/interface.md §3).
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
  const scan = new JsonScan(text);
  try {
    scan.run(maxDepth);
  } catch (e) {
    if (!(e instanceof ScanError)) throw e;
    // The text came from valid UTF-8 and the scan never stops inside a surrogate pair.
    const offset = encoder.encode(text.slice(0, e.index)).length;
    throw new StrictJsonError(offset, e.reason, e.hint);
  }
  // The scan accepted a subset of what JSON.parse accepts, so this cannot
  // throw; JSON.parse defines members with CreateDataProperty, so
  // `__proto__` stays an own data property.
  return { value: JSON.parse(text), compact: scan.compact };
}

/**
 * Parses a request body or a document as strict JSON.
 *
 * @param bytes the UTF-8 text.
 * @returns the parsed value, and whether the bytes are compact (see `StrictJson.compact`).
 * @throws {ServiceError} `invalid_json`, with the reader's hint when it has one.
 *
 * @example
 * ```ts
 * const { value } = parseJsonBody(new TextEncoder().encode('{"id": 1}'));
 * ```
 */
export function parseJsonBody(bytes: Uint8Array): StrictJson {
  try {
    return readStrictJson(bytes);
  } catch (error) {
    if (error instanceof StrictJsonError) {
      const message = error.hint ? `${error.message}; ${error.hint}` : error.message;
      throw new ServiceError("invalid_json", message);
    }
    throw error;
  }
}
