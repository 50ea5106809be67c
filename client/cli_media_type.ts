/**
 * The content type `template add` and `policy add` store a document with when
 * `--content-type` is not given: what the file is, by its extension, so that a
 * plain-text or YAML document is not sent as JSON (which the service parses
 * strictly, and which alone may govern intents).
 * @module
 */

import { extname } from "node:path";

/** The media type of each known extension (lower case, with its dot). */
export const MEDIA_TYPES_BY_EXTENSION: Readonly<Record<string, string>> = {
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
  ".yaml": "application/yaml",
  ".yml": "application/yaml",
};

/** What an unknown extension, or standard input that is not JSON, is sent as. */
export const FALLBACK_MEDIA_TYPE = "application/octet-stream";

// Default options: a leading BOM is dropped, so that JSON with one is still sent
// as JSON and the service, not this guess, says what is wrong with it; sent as
// octet-stream it would be stored without a word, and could never govern.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The media type to send a document with.
 *
 * @param path the FILE argument; `-` is standard input.
 * @param bytes the document's bytes, looked at only for standard input, which
 *   has no extension: `application/json` when its UTF-8 text is JSON (by
 *   `JSON.parse`; the service applies its stricter rules), else
 *   `application/octet-stream`.
 * @returns for a file, the type of its extension in any case
 *   ({@link MEDIA_TYPES_BY_EXTENSION}), else `application/octet-stream`.
 */
export function documentMediaType(path: string, bytes: Uint8Array): string {
  if (path === "-") return looksLikeJson(bytes) ? "application/json" : FALLBACK_MEDIA_TYPE;
  const extension = extname(path).toLowerCase();
  return MEDIA_TYPES_BY_EXTENSION[extension] ?? FALLBACK_MEDIA_TYPE;
}

function looksLikeJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(utf8.decode(bytes));
    return true;
  } catch {
    // Invalid UTF-8 (the fatal decoder) or not JSON.
    return false;
  }
}
