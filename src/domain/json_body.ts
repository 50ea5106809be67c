/**
 * Strict JSON as a request body (docs/interface.md §3): the strict reader's
 * refusal becomes the client's `invalid_json`.
 * @module
 */

import { ServiceError } from "../errors.ts";
import { readStrictJson, type StrictJson, StrictJsonError } from "./strict_json.ts";

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
