/**
 * The types of the feed's events (docs/interface.md §9, §10), which webhook
 * deliveries carry too (§11).
 * @module
 */

/**
 * Every event type the service sends today, in the order an intent's life
 * meets them. Consumers ignore types they do not handle: more may come.
 */
export const EVENT_TYPES = [
  "intent.accepted",
  "intent.pending",
  "intent.approval_added",
  "intent.rejection_added",
  "intent.rejected",
  "intent.expired",
] as const;

/**
 * One of {@link EVENT_TYPES}: `intent.accepted` (exactly once per accepted
 * intent), `intent.pending`, `intent.approval_added`, `intent.rejection_added`,
 * `intent.rejected` (exactly once per rejected intent), `intent.expired`.
 */
export type EventType = (typeof EVENT_TYPES)[number];
