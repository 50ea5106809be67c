/**
 * Assertions of the strict JSON reader's answers, shared by its example
 * tests and its property tests.
 * @module
 */

import assert from "node:assert/strict";
import { parseStrictJson, StrictJsonError } from "../../src/domain/strict_json.ts";

/** UTF-8 bytes of a text. */
export const utf8 = (text: string) => new TextEncoder().encode(text);

/** Parses `text` strictly and checks the result is exactly JSON.parse's. */
export function assertAccepted(text: string | Uint8Array): unknown {
  const bytes = typeof text === "string" ? utf8(text) : text;
  const value = parseStrictJson(bytes);
  assert.deepStrictEqual(value, JSON.parse(new TextDecoder().decode(bytes)));
  return value;
}

/** Asserts the strict reader refuses the input, optionally at `offset`; returns the error. */
export function assertRejected(
  input: string | Uint8Array,
  reason: RegExp,
  offset?: number,
  options?: { maxDepth?: number },
): StrictJsonError {
  const bytes = typeof input === "string" ? utf8(input) : input;
  let caught: unknown;
  try {
    parseStrictJson(bytes, options);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof StrictJsonError, `expected a StrictJsonError, got ${caught}`);
  assert.ok(caught instanceof SyntaxError);
  assert.match(caught.message, /^Cannot parse JSON at byte \d+: /);
  assert.match(caught.message, reason);
  if (offset !== undefined) {
    assert.equal(caught.offset, offset, caught.message);
    assert.ok(caught.message.startsWith(`Cannot parse JSON at byte ${offset}: `));
  }
  return caught;
}
