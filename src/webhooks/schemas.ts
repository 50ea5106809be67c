/**
 * The request shapes of the webhook admin API (docs/interface.md §11), one valibot
 * schema each: they validate requests and are the source of the OpenAPI
 * document's schemas (`src/http/openapi/webhook_components.ts`). The URL rule
 * depends on the operator's settings, so it runs after the shape
 * (`checkWebhookUrl`, 400 `invalid_webhook_url`).
 * @module
 */

import * as v from "valibot";
import { EVENT_TYPES } from "@intents/protocol/events";
import { MAX_WEBHOOK_URL_LENGTH } from "./url.ts";

/** The longest `description`, in characters (code points). */
export const MAX_DESCRIPTION_LENGTH = 200;

/** The URL's shape; its rule (length included) is `checkWebhookUrl`'s, with its own code. */
const url = v.pipe(
  v.string("expected a string"),
  v.description(
    `An absolute https: URL (http: with WEBHOOKS_ALLOW_HTTP=true), at most ${MAX_WEBHOOK_URL_LENGTH} characters, with a host, no user info, ` +
      "no fragment, in its normal form; unless WEBHOOKS_ALLOW_PRIVATE=true, a host given as an " +
      "address must be globally reachable (else 400 `invalid_webhook_url`).",
  ),
);

const events = v.pipe(
  v.nullable(
    v.pipe(
      v.array(v.picklist(EVENT_TYPES, "must be an event type of the feed")),
      v.minLength(1, "must name at least one event type (null or absent: every type)"),
      v.check(
        (types) => new Set(types).size === types.length,
        "must not name a type twice",
      ),
    ),
  ),
  v.description("The event types it receives; absent or null: every type, those added later too."),
);

const description = v.pipe(
  v.string("expected a string"),
  v.maxCodePoints(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`),
  v.description("Free text for operators."),
);

/** `POST /webhooks` body. */
export const WebhookCreateSchema = v.strictObject({
  url,
  events: v.optional(events),
  description: v.optional(description),
}, "expected an object");

/** `PATCH /webhooks/{id}` body: any of its members. */
export const WebhookUpdateSchema = v.strictObject({
  url: v.optional(url),
  events: v.optional(events),
  description: v.optional(description),
  status: v.optional(
    v.pipe(
      v.picklist(["active", "paused"], 'expected "active" or "paused"'),
      v.description(
        "`paused` stops deliveries; `active` resumes a paused or disabled endpoint where it " +
          "stopped (the waiting event is tried at once).",
      ),
    ),
  ),
}, "expected an object");

/** `POST /webhooks/{id}/replay` body. */
export const WebhookReplaySchema = v.strictObject({
  after: v.pipe(
    v.nullable(
      v.pipe(
        v.string("expected an event id or null"),
        v.minLength(1, "must not be empty"),
        v.maxLength(128, "must be at most 128 characters"),
        v.regex(/^[\x21-\x7e]+$/, "must be printable ASCII without white space"),
      ),
    ),
    v.description(
      "Deliveries start again after this event id (one the service handed out); null: from " +
        "the feed's beginning.",
    ),
  ),
}, "expected an object");

/** The longest `overlap_s` of a rotation: a day, the default. */
export const MAX_OVERLAP_S = 86_400;

/** `POST /webhooks/{id}/secret` body, optional (no body: the default overlap). */
export const WebhookRotateSchema = v.strictObject({
  overlap_s: v.optional(
    v.pipe(
      v.number("expected a whole number of seconds"),
      v.safeInteger("expected a whole number of seconds"),
      v.minValue(0, "must be at least 0"),
      v.maxValue(MAX_OVERLAP_S, `must be at most ${MAX_OVERLAP_S}`),
      v.description(
        "How long every older secret stays in force at most, in seconds (none longer than it " +
          "already had); default 86400. 0 retires them at once (a secret that leaked).",
      ),
    ),
  ),
}, "expected an object");

/** A validated `POST /webhooks` body. */
export type WebhookCreate = v.InferOutput<typeof WebhookCreateSchema>;
/** A validated `PATCH /webhooks/{id}` body. */
export type WebhookUpdate = v.InferOutput<typeof WebhookUpdateSchema>;

/** The bounds of `limit` on `GET /webhooks/{id}/attempts`: at most the attempts kept. */
export const ATTEMPTS_LIMIT = { min: 1, max: 100, fallback: 20 } as const;
