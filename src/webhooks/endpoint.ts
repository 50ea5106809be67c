/**
 * A webhook endpoint (docs/interface.md §11) as the service keeps it, and every
 * change made to it, as pure functions: what an admin call or an attempt
 * makes of it. The store persists what these return, in commits checked
 * against the endpoint as it was read (`src/storage/kv_webhook_store.ts`). An endpoint
 * is a cursor over the feed (docs/architecture.md: Webhook delivery).
 * @module
 */

import type { EventType } from "@intents/protocol/events";

/** How an attempt may fail before or instead of an answer (the `error` of docs/interface.md §11's attempts). */
export const DELIVERY_ERRORS = [
  "timeout",
  "connection",
  "redirect",
  "refused_address",
  "refused_url",
] as const;

/** How an attempt failed before or instead of an answer: one of {@link DELIVERY_ERRORS}. */
export type DeliveryError = typeof DELIVERY_ERRORS[number];

/** `active` delivers; `paused` by an operator; `disabled` by the service (see `disabledReason`). */
export type EndpointStatus = "active" | "paused" | "disabled";

/** Why the service disabled an endpoint: a 410 Gone, or the last retry of the schedule failed. */
export type DisabledReason = "gone" | "failing";

/** The most endpoints the service keeps (docs/interface.md §11). */
export const MAX_WEBHOOKS = 100;

/** How long a replaced secret stays in force at most, and by default: 24 hours. */
export const REPLACED_SECRET_MS = 24 * 60 * 60 * 1000;

/** How old the endpoint a deliverer signs with may be at an attempt (docs/interface.md §11). */
export const SIGNING_VIEW_MS = 1_000;

/** The most secrets in force at once, the newest included, so that headers stay bounded. */
export const MAX_SECRETS = 20;

/** A signing secret, and until when it is in force (Unix ms; null: until replaced). */
export interface WebhookSecret {
  secret: string;
  expiresAt: number | null;
}

/** One delivery attempt, as the attempts log keeps it. */
export interface AttemptRecord {
  /** The event's id (its feed position in decimal). */
  eventId: string;
  /** 1 for the first attempt of this event, then 2, 3, … */
  attempt: number;
  /** RFC 3339 time the attempt started. */
  at: string;
  /** The answer's HTTP status, or null when none came. */
  status: number | null;
  error: DeliveryError | null;
  durationMs: number;
}

/** An endpoint as the service keeps it. */
export interface Endpoint {
  id: string;
  url: string;
  /** The types it receives; null: every type (those added later too). */
  events: EventType[] | null;
  description: string;
  status: EndpointStatus;
  /** Set while `disabled`. */
  disabledReason: DisabledReason | null;
  /** RFC 3339 time of its creation. */
  createdAt: string;
  /** The secrets in force, newest first (some may have expired since: see {@link secretsInForce}). */
  secrets: WebhookSecret[];
  /** Every event up to this feed position was acknowledged or is not of its types (0: none). */
  position: number;
  /** The position of the event whose attempts failed so far, or null when none did. */
  retrying: number | null;
  /** How many attempts of `retrying` failed. */
  failures: number;
  /** No attempt before this time (Unix ms), or null: at once. */
  retryAt: number | null;
  /** Attempts recorded so far: the number of the latest in the attempts log. */
  attempts: number;
  lastAttempt: AttemptRecord | null;
}

/** What {@link newEndpoint} needs: the endpoint's own fields, its secret, and the time. */
export interface NewEndpoint extends Pick<Endpoint, "id" | "url" | "events" | "description"> {
  secret: string;
  /** The feed's head: the endpoint receives the events after it. */
  head: number;
  now: Date;
}

/** A new, active endpoint that receives the events after `head`. */
export function newEndpoint(options: NewEndpoint): Endpoint {
  return {
    id: options.id,
    url: options.url,
    events: options.events,
    description: options.description,
    status: "active",
    disabledReason: null,
    createdAt: options.now.toISOString(),
    secrets: [{ secret: options.secret, expiresAt: null }],
    position: options.head,
    retrying: null,
    failures: 0,
    retryAt: null,
    attempts: 0,
    lastAttempt: null,
  };
}

/**
 * A new endpoint id: `wh_` and 32 hex digits, the first 12 the time in ms, so
 * ids sort by age (those made within one millisecond, in any order).
 */
export function newEndpointId(now: number = Date.now()): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let time = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = time % 256;
    time = Math.floor(time / 256);
  }
  return `wh_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** True for a string that can be an endpoint id (others are 404 without a read). */
export function isEndpointId(text: string): boolean {
  return /^wh_[0-9a-f]{32}$/.test(text);
}

/** True when `type` is one the endpoint receives. */
export function wants(endpoint: Endpoint, type: string): boolean {
  return endpoint.events === null || (endpoint.events as string[]).includes(type);
}

/** The secrets that sign a delivery made at `now`, newest first. */
export function secretsInForce(endpoint: Endpoint, now: number): string[] {
  return endpoint.secrets
    .filter((s) => s.expiresAt === null || s.expiresAt > now)
    .map((s) => s.secret);
}

/** Ready to try the next event at once, with a fresh schedule. */
function fresh(endpoint: Endpoint): Endpoint {
  return { ...endpoint, retrying: null, failures: 0, retryAt: null };
}

/** What `PATCH /webhooks/{id}` may change. */
export interface EndpointPatch {
  url?: string;
  events?: EventType[] | null;
  description?: string;
  status?: "active" | "paused";
}

/**
 * The endpoint after a `PATCH`. Setting `active` on a paused or disabled
 * endpoint resumes it where it stopped: the event it waited to deliver is
 * tried at once, on a fresh schedule. A new URL is tried at once too.
 */
export function updateEndpoint(endpoint: Endpoint, patch: EndpointPatch): Endpoint {
  let next: Endpoint = { ...endpoint };
  if (patch.url !== undefined && patch.url !== endpoint.url) {
    next = fresh({ ...next, url: patch.url });
  }
  if (patch.events !== undefined) next.events = patch.events;
  if (patch.description !== undefined) next.description = patch.description;
  if (patch.status === "paused") next = { ...next, status: "paused", disabledReason: null };
  if (patch.status === "active" && endpoint.status !== "active") {
    next = fresh({ ...next, status: "active", disabledReason: null });
  }
  return next;
}

/**
 * The endpoint after `POST /webhooks/{id}/replay`: deliveries start again
 * after `after` (0: from the feed's beginning), on a fresh schedule. Its
 * status is left as it is: a paused or disabled endpoint replays once resumed.
 */
export function replayEndpoint(endpoint: Endpoint, after: number): Endpoint {
  return fresh({ ...endpoint, position: after });
}

/**
 * The endpoint after `POST /webhooks/{id}/secret`: `secret` is the newest;
 * every older secret stays in force at most `overlapMs` more (none longer
 * than it already had); those whose end has come are dropped (with 0, all of
 * them: a leaked secret is retired at once), and at most {@link MAX_SECRETS} stay.
 *
 * @param now Unix ms.
 * @param overlapMs 0 to {@link REPLACED_SECRET_MS}; default the latter.
 */
export function rotateSecret(
  endpoint: Endpoint,
  secret: string,
  now: number,
  overlapMs: number = REPLACED_SECRET_MS,
): Endpoint {
  const end = now + overlapMs;
  const kept = endpoint.secrets
    .map((s) => ({ ...s, expiresAt: s.expiresAt === null ? end : Math.min(s.expiresAt, end) }))
    .filter((s) => s.expiresAt > now);
  return { ...endpoint, secrets: [{ secret, expiresAt: null }, ...kept].slice(0, MAX_SECRETS) };
}

/** The endpoint after the events up to `position` turned out not to be of its types. */
export function skipTo(endpoint: Endpoint, position: number): Endpoint {
  return { ...endpoint, position: Math.max(endpoint.position, position) };
}

/** How an attempt ended, for the endpoint. */
export type AttemptVerdict = "acknowledged" | "gone" | "failed";

/** A 2xx answer acknowledges; a 410 is gone; anything else (a redirect, no answer) failed. */
export function judgeAttempt(
  result: { status: number | null; error: DeliveryError | null },
): AttemptVerdict {
  const { status, error } = result;
  if (error === null && status !== null && status >= 200 && status < 300) return "acknowledged";
  return status === 410 ? "gone" : "failed";
}

/** What {@link afterAttempt} needs. */
export interface AttemptOutcome {
  /** The event's feed position. */
  position: number;
  /** The attempt as the log keeps it. */
  record: AttemptRecord;
  /** For a 429 or 503: its `Retry-After`, in seconds, when at most an hour. */
  retryAfterS?: number;
  /** When the attempt ended (Unix ms): delays count from then. */
  endedAt: number;
  /** The delays before each retry (§11: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  schedule: readonly number[];
}

/**
 * The endpoint after an attempt of the event at `position`: acknowledged,
 * it moves past it; a 410 disables it (`gone`); another failure waits for
 * the schedule's next delay (a `Retry-After` on a 429 or 503 replacing it),
 * and the failure after the last retry disables it (`failing`). Either way
 * the attempt is the latest in its log.
 */
export function afterAttempt(endpoint: Endpoint, outcome: AttemptOutcome): Endpoint {
  const { record, position } = outcome;
  const logged = { ...endpoint, attempts: endpoint.attempts + 1, lastAttempt: record };
  const verdict = judgeAttempt(record);
  if (verdict === "acknowledged") return fresh({ ...logged, position });
  if (verdict === "gone") {
    return fresh({ ...logged, status: "disabled", disabledReason: "gone" });
  }
  const failures = record.attempt;
  if (failures > outcome.schedule.length) {
    return fresh({ ...logged, status: "disabled", disabledReason: "failing" });
  }
  const retryAfter = (record.status === 429 || record.status === 503) &&
      outcome.retryAfterS !== undefined
    ? outcome.retryAfterS * 1000
    : undefined;
  const delay = retryAfter ?? outcome.schedule[failures - 1];
  return { ...logged, retrying: position, failures, retryAt: outcome.endedAt + delay };
}

/** The number of the attempt of the event at `position` about to be made. */
export function attemptNumber(endpoint: Endpoint, position: number): number {
  return endpoint.retrying === position ? endpoint.failures + 1 : 1;
}

/** An attempt as the API shows it. */
export function renderAttempt(record: AttemptRecord): Record<string, unknown> {
  return {
    event_id: record.eventId,
    attempt: record.attempt,
    at: record.at,
    status: record.status,
    error: record.error,
    duration_ms: record.durationMs,
  };
}

/** What {@link renderEndpoint} adds to the stored endpoint. */
export interface EndpointView {
  /** The feed's head now. */
  head: number;
  /** The position of the event it waits to deliver, or null. */
  nextEvent: number | null;
}

/**
 * The endpoint as the API shows it (without secrets): `after` is the id of
 * the event it delivers after (null: the feed's beginning), `lag` how many
 * events of the feed, of any type, follow it.
 */
export function renderEndpoint(endpoint: Endpoint, view: EndpointView): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    ...(endpoint.status === "disabled" ? { disabled_reason: endpoint.disabledReason } : {}),
    created_at: endpoint.createdAt,
    after: endpoint.position === 0 ? null : String(endpoint.position),
    next_event: view.nextEvent === null ? null : String(view.nextEvent),
    lag: Math.max(0, view.head - endpoint.position),
    last_attempt: endpoint.lastAttempt ? renderAttempt(endpoint.lastAttempt) : null,
  };
}
