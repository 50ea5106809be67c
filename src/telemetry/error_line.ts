/**
 * What an operator's log line says of a failure: the first line of its
 * message (a stack, a server's answer or a peer's text may follow the
 * first line break), never more.
 * @module
 */

/**
 * The first line of what went wrong: an error's message up to its first
 * line break, or anything else as text.
 *
 * @example
 * ```ts
 * errorLine(new Error("the store is locked\nat …")); // "the store is locked"
 * ```
 */
export function errorLine(error: unknown): string {
  return error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
}
