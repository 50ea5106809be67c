/**
 * The public form of a stored intent (CONTRACT §4):
 * `{id, variant, template_id|policy_id, attrs?, authorship, received_at, state, request}`.
 * @module
 */

import type { StoredIntent } from "./intent.ts";

const utf8 = new TextDecoder();

/**
 * Renders a stored intent as JSON text. `request` is the stored body: the
 * request's JSON value with every number as JCS writes it.
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
  head.state = "accepted";
  const json = JSON.stringify(head);
  return `${json.slice(0, -1)},"request":${text}}`;
}
