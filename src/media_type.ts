/**
 * The one media-type rule: what counts as JSON. The HTTP edge refuses a
 * request body that is not; the storage reads a stored document's content
 * type by it (only a document stored as JSON can govern, docs/interface.md
 * §10); the domain is handed the answer as a boolean.
 * @module
 */

/**
 * True for `application/json`, parameters allowed, in any case.
 *
 * @example
 * ```ts
 * isJsonMediaType("Application/JSON; charset=utf-8"); // true
 * isJsonMediaType("text/plain"); // false
 * ```
 */
export function isJsonMediaType(contentType: string): boolean {
  return contentType.split(";", 1)[0].trim().toLowerCase() === "application/json";
}
