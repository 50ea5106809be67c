/**
 * Checkpoints as C2SP tlog-checkpoint defines them: the text of a signed note
 * made of the origin line, the tree size in decimal without leading zeros,
 * the root hash in base64, and optional non-empty extension lines, each line
 * ending in a newline. This log writes no extension lines.
 * @module
 */

import { base64 } from "@scure/base";
import { parseDecimal } from "./_bytes.ts";
import { hasControl, LONE_SURROGATE } from "./_keys.ts";
import { HASH_SIZE } from "./hash.ts";

/** A checkpoint's parts. */
export interface Checkpoint {
  /** The log's identity (the first line). */
  origin: string;
  /** The number of entries in the tree. */
  size: number;
  /** The RFC 6962 root hash of the tree of that size. */
  rootHash: Uint8Array;
  /** Extension lines, each without its newline (none in what this log writes). */
  extensions?: string[];
}

/**
 * The note text of a checkpoint: `origin\nsize\nbase64(root)\n`, then its
 * extension lines if any.
 *
 * @throws {TypeError} when the origin is empty, holds a newline or a control
 *   character, the root hash is not 32 bytes, or an extension line is empty.
 * @throws {RangeError} when the size is not a whole number from 0 to 2^53 − 1.
 *
 * @example
 * ```ts
 * formatCheckpoint({ origin: "example.com/log", size: 1, rootHash: new Uint8Array(32) });
 * // "example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"
 * ```
 */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, rootHash, extensions = [] } = checkpoint;
  for (const line of [origin, ...extensions]) {
    if (typeof line !== "string" || !isLine(line)) {
      throw new TypeError("a checkpoint's origin and extension lines are non-empty lines of text");
    }
  }
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new RangeError(`a tree size is a whole number from 0 to 2^53 − 1, not ${size}`);
  }
  if (!(rootHash instanceof Uint8Array) || rootHash.length !== HASH_SIZE) {
    throw new TypeError("a root hash is 32 bytes");
  }
  return [origin, String(size), base64.encode(rootHash), ...extensions].map((l) => `${l}\n`).join(
    "",
  );
}

/**
 * The parts of a checkpoint's note text: at least three non-empty lines, each
 * ending in a newline; the size in decimal without leading zeros; the root
 * hash in padded base64 of 32 bytes.
 *
 * @throws {SyntaxError} when the text is not a checkpoint (or its size is above 2^53 − 1).
 *
 * @example
 * ```ts
 * parseCheckpoint("example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n").size; // 1
 * ```
 */
export function parseCheckpoint(text: string): Checkpoint {
  const fail = (why: string) => new SyntaxError(`Cannot parse a checkpoint: ${why}`);
  if (typeof text !== "string" || !text.endsWith("\n")) throw fail("it does not end in a newline");
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw fail("it has fewer than three lines");
  if (!lines.every(isLine)) throw fail("a line is empty or holds a control character");
  const [origin, sizeText, rootText, ...extensions] = lines;
  const size = parseDecimal(sizeText);
  if (size === null) throw fail("the size is not a decimal number without leading zeros");
  let rootHash: Uint8Array;
  try {
    rootHash = base64.decode(rootText);
  } catch {
    throw fail("the root hash is not padded base64");
  }
  if (rootHash.length !== HASH_SIZE) throw fail("the root hash is not 32 bytes");
  return extensions.length > 0
    ? { origin, size, rootHash, extensions }
    : { origin, size, rootHash };
}

function isLine(line: string): boolean {
  return line !== "" && !hasControl(line, false) && !LONE_SURROGATE.test(line);
}
