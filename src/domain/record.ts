/**
 * The public form of a stored intent (CONTRACT §4):
 * `{id, variant, template_id|policy_id, attrs?, authorship, received_at, request}`.
 * @module
 */

import type { StoredIntent } from "../storage/store.ts";

const utf8 = new TextDecoder();

/**
 * Renders a stored intent as JSON text. `request` is the body exactly as
 * received (it passed the strict reader, so it is valid JSON text).
 *
 * @param record the stored intent.
 * @param parsed the body's parsed value when at hand, saving a parse.
 */
export function renderIntent(record: StoredIntent, parsed?: unknown): string {
  const text = utf8.decode(record.body);
  const value = (parsed ?? JSON.parse(text)) as Record<string, Record<string, unknown>>;
  const attrs = record.variant === "A" ? value.payload?.attrs : value.intent?.attrs;
  const head: Record<string, unknown> = { id: record.id, variant: record.variant };
  head[record.variant === "A" ? "template_id" : "policy_id"] = record.refId;
  if (attrs !== undefined) head.attrs = attrs;
  head.authorship = record.authorship;
  head.received_at = record.receivedAt;
  const json = JSON.stringify(head);
  return `${json.slice(0, -1)},"request":${text.trim()}}`;
}
