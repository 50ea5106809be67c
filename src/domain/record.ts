/**
 * The public form of a stored intent (docs/interface.md §4, §10):
 * `{id, variant, template_id|policy_id, attrs?, authorship, received_at,
 * state, approval?, request}`.
 * @module
 */

import { approvalWeight, startApproval, stateAt } from "./governance.ts";
import { canonicalViewOfParsed } from "@intents/protocol/jcs";
import { recordSha256OfCanonical } from "@intents/protocol/log/entry";
import type {
  ApprovalEntry,
  ApprovalState,
  CanonicalRequest,
  IntentEvent,
  NewIntent,
  StoredIntent,
} from "./intent.ts";

const utf8 = new TextDecoder();

/** Options of {@link renderIntent}. */
export interface RenderOptions {
  /** The signed object's `attrs` when at hand (undefined when it has none), saving a parse. */
  attrs?: unknown;
  /**
   * Render the state as it stands at this time (a pending intent past its
   * deadline is expired); without it, as the record holds it (an event's
   * record, as it stood after the event).
   */
  now?: Date;
}

/** Decisions as the record shows them: who, how and when (a signature's digest stays inside). */
function renderEntries(entries: readonly ApprovalEntry[] | undefined) {
  return (entries ?? []).map(({ key, kind, at }) => ({ key, kind, at }));
}

/** The record's `approval` member. */
export function renderApproval(approval: ApprovalState): Record<string, unknown> {
  return {
    threshold: approval.threshold,
    // A sum of sixteen safe integers may pass 2^53: JSON numbers are doubles.
    weight: Number(approvalWeight(approval)),
    signers: approval.signers,
    approvals: renderEntries(approval.approvals),
    rejections: renderEntries(approval.rejections),
    expires_at: approval.expiresAt,
    // Under rules (docs/interface.md §15): the kinds that count and the rules that were true.
    ...(approval.kinds ? { kinds: approval.kinds } : {}),
    ...(approval.rules ? { rules: approval.rules } : {}),
  };
}

/**
 * The answer of a dry run (docs/interface.md §15): what the intent would be,
 * `{"outcome", "approval", "rules"}`, as if received at `at` (RFC 3339).
 */
export function renderDryRun(intent: NewIntent, at: string): string {
  const receivedAt = intent.receivedAt ?? at;
  const approval = intent.quorum
    ? renderApproval(startApproval(intent.quorum, intent.approvals ?? [], receivedAt, intent.ruled))
    : null;
  return JSON.stringify({ outcome: intent.state, approval, rules: intent.ruled?.rules ?? [] });
}

function attrsOf(variant: StoredIntent["variant"], value: Record<string, Record<string, unknown>>) {
  return variant === "A" ? value.payload?.attrs : value.intent?.attrs;
}

/**
 * Renders a stored intent as JSON text. `request` is the stored body: the
 * request's JSON value with every number as JCS writes it.
 */
export function renderIntent(record: StoredIntent, options: RenderOptions = {}): string {
  const text = utf8.decode(record.body);
  const attrs = "attrs" in options ? options.attrs : attrsOf(record.variant, JSON.parse(text));
  const json = JSON.stringify(recordHead(record, attrs, options.now));
  return `${json.slice(0, -1)},"request":${text}}`;
}

/**
 * The record of {@link renderIntent} (without `now`) as a JSON value, its
 * body parsed once: what an event's log entry commits to, without writing
 * the text and reading it back.
 */
export function recordValue(record: StoredIntent): Record<string, unknown> {
  const request = JSON.parse(utf8.decode(record.body));
  const value = recordHead(record, attrsOf(record.variant, request), undefined);
  value.request = request;
  return value;
}

/** Where the request's text goes in the record whose `R` {@link recordSha256Of} computes. */
const REQUEST = {};
/**
 * {@link REQUEST}'s bytes for one call at a time (none awaits): no map made
 * per record, and its one entry kept (emptied, not deleted: a map that loses
 * its last entry makes its table again).
 */
const NO_BYTES = new Uint8Array(0);
const requestText = new Map<unknown, Uint8Array>([[REQUEST, NO_BYTES]]);

/**
 * `R` of the record of {@link renderIntent} (without `now`): SHA-256 of its
 * JCS, the request's part written before (docs/interface.md §14).
 */
export function recordSha256Of(record: StoredIntent, canonical: CanonicalRequest): string {
  const value = recordHead(record, canonical.attrs, undefined);
  value.request = REQUEST;
  requestText.set(REQUEST, canonical.bytes);
  try {
    return recordSha256OfCanonical(canonicalViewOfParsed(value, requestText));
  } finally {
    requestText.set(REQUEST, NO_BYTES);
  }
}

/** Every member of the record but `request`, in the order the record shows them. */
function recordHead(
  record: StoredIntent,
  attrs: unknown,
  now: Date | undefined,
): Record<string, unknown> {
  const head: Record<string, unknown> = { id: record.id, variant: record.variant };
  head[record.variant === "A" ? "template_id" : "policy_id"] = record.refId;
  if (attrs !== undefined) head.attrs = attrs;
  head.authorship = record.authorship;
  head.received_at = record.receivedAt;
  head.state = now ? stateAt(record, now) : record.state;
  if (record.approval) head.approval = renderApproval(record.approval);
  return head;
}

/**
 * One feed event as JSON text on one line: `{"id", "type", "record"}`, the id
 * its position in decimal. The pull form of `GET /events` and every webhook
 * delivery's body (docs/interface.md §9, §11).
 */
export function renderEvent(event: IntentEvent): string {
  return `{"id":"${event.position}","type":"${event.type}","record":${renderIntent(event.intent)}}`;
}

/** The object every signer signs: `payload` (Variant A) or `intent` (Variant B). */
export function signedObject(
  record: Pick<StoredIntent, "body" | "variant">,
): Record<string, unknown> {
  const value = JSON.parse(utf8.decode(record.body)) as Record<string, Record<string, unknown>>;
  return record.variant === "A" ? value.payload : value.intent;
}
