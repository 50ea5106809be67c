/**
 * The `components.schemas` of the webhook admin API, from the valibot
 * schemas that validate its requests (`src/webhooks/schemas.ts`) and of its
 * answers; and the delivery, as an OpenAPI 3.1 `webhooks` entry.
 * @module
 */

import * as v from "valibot";
import type { JsonSchema } from "@valibot/to-json-schema";
import { EVENT_TYPES } from "@intents/protocol/events";
import { convertComponents, OpaqueIdSchema as opaqueId, ref } from "./components.ts";
import type { Obj } from "./responses.ts";
import { DELIVERY_ERRORS } from "../../webhooks/endpoint.ts";
import {
  WebhookCreateSchema,
  WebhookReplaySchema,
  WebhookRotateSchema,
  WebhookUpdateSchema,
} from "../../webhooks/schemas.ts";
import {
  MAX_WEBHOOK_URL_LENGTH,
  type WebhookUrlOptions,
  webhookUrlPattern,
} from "../../webhooks/url.ts";

const time = v.pipe(v.string(), v.isoTimestamp(), v.description("RFC 3339 time."));

/** One attempt of the log. */
export const WebhookAttemptSchema = v.object({
  event_id: v.pipe(opaqueId, v.description("The event's id: its `webhook-id`.")),
  attempt: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.description("1 for the event's first attempt, then 2, 3, …"),
  ),
  at: time,
  status: v.pipe(
    v.nullable(v.pipe(v.number(), v.integer())),
    v.description("The answer's HTTP status; null when none came."),
  ),
  error: v.pipe(
    v.nullable(v.picklist(DELIVERY_ERRORS)),
    v.description(
      "null when an answer came that is not a redirect; else how the attempt failed " +
        "(`refused_url`: an `http:` URL while plain HTTP is not allowed).",
    ),
  ),
  duration_ms: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description("How long the attempt took, in milliseconds."),
  ),
});

/** An endpoint as the API shows it. */
export const WebhookSchema = v.object({
  id: v.pipe(v.string(), v.description("The endpoint's id.")),
  url: v.pipe(v.string(), v.description("Where deliveries are sent.")),
  events: v.pipe(
    v.nullable(v.array(v.picklist(EVENT_TYPES))),
    v.description("The types it receives; null: every type."),
  ),
  description: v.pipe(v.string(), v.description('Free text for operators ("" when none).')),
  status: v.pipe(
    v.picklist(["active", "paused", "disabled"]),
    v.description(
      "`active` delivers; `paused` by an operator; `disabled` by the service " +
        "(see `disabled_reason`).",
    ),
  ),
  disabled_reason: v.optional(
    v.pipe(
      v.picklist(["gone", "failing"]),
      v.description(
        "While disabled: `gone` (it answered 410) or `failing` (the last retry failed).",
      ),
    ),
  ),
  created_at: time,
  after: v.pipe(
    v.nullable(opaqueId),
    v.description(
      "Deliveries go on after this event id: every event up to it was acknowledged or is not " +
        "of its types (null: from the feed's beginning). At creation, the feed's head.",
    ),
  ),
  next_event: v.pipe(
    v.nullable(opaqueId),
    v.description("The id of the event it waits to deliver; null when there is none."),
  ),
  lag: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description("How many events of the feed, of any type, follow `after`."),
  ),
  last_attempt: v.nullable(WebhookAttemptSchema),
});

const secret = v.pipe(
  v.string(),
  v.regex(/^whsec_[A-Za-z0-9+/]{43}=$/),
  v.description("`whsec_` + base64 (RFC 4648 §4, padded) of 32 random bytes."),
);

/** What `POST /webhooks` answers: the endpoint and its secret. */
export const WebhookCreatedSchema = v.object({ ...WebhookSchema.entries, secret });

const DEFINITIONS = {
  WebhookCreate: WebhookCreateSchema,
  WebhookUpdate: WebhookUpdateSchema,
  WebhookReplay: WebhookReplaySchema,
  WebhookRotate: WebhookRotateSchema,
  Webhook: WebhookSchema,
  WebhookCreated: WebhookCreatedSchema,
  WebhookList: v.object({ items: v.array(WebhookSchema) }),
  WebhookSecret: v.object({ secret }),
  WebhookAttempt: WebhookAttemptSchema,
  WebhookAttemptList: v.object({
    items: v.pipe(v.array(WebhookAttemptSchema), v.description("Newest first.")),
  }),
};

/** A webhook component's name. */
export type WebhookComponentName = keyof typeof DEFINITIONS;

const DESCRIPTIONS: Record<WebhookComponentName, string> = {
  WebhookCreate: "A new webhook endpoint.",
  WebhookUpdate: "Changes to a webhook endpoint: any of its members.",
  WebhookReplay: "Where deliveries start again.",
  WebhookRotate: "How long the older secrets stay in force at most.",
  Webhook: "A webhook endpoint: a server-held cursor over the feed, delivered in order.",
  WebhookCreated: "A new webhook endpoint and its secret, shown here and at rotation only.",
  WebhookList: "Every webhook endpoint, oldest first.",
  WebhookSecret: "A new secret; the older ones stay in force at most `overlap_s` more.",
  WebhookAttempt: "One delivery attempt.",
  WebhookAttemptList: "The latest attempts of an endpoint (the last 100 are kept).",
};

/** A reference to a webhook component. */
export function webhookRef(name: WebhookComponentName): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * The webhook components as JSON Schema 2020-12: lengths in code points are
 * `maxLength` (which counts code points), "no type twice" is `uniqueItems`,
 * and the URL's pattern is what the process with these settings accepts
 * (`webhookUrlPattern`).
 *
 * @param options `allowHttp`: `WEBHOOKS_ALLOW_HTTP`, as the process runs with it.
 */
export function webhookComponentSchemas(
  options: Pick<WebhookUrlOptions, "allowHttp">,
): Record<string, JsonSchema> {
  const out = convertComponents(DEFINITIONS, DESCRIPTIONS, (action, jsonSchema) => {
    if (action.type === "max_code_points") {
      return { ...jsonSchema, maxLength: action.requirement as number };
    }
    if (action.type === "check") return { ...jsonSchema, uniqueItems: true };
    return undefined;
  });
  // The URL rule is checked after the shape, with its own code; its length, scheme, authority
  // and characters JSON Schema can state.
  const pattern = webhookUrlPattern(options);
  for (const name of ["WebhookCreate", "WebhookUpdate"] as const) {
    const properties = out[name].properties as Record<string, JsonSchema>;
    properties.url = { ...properties.url, maxLength: MAX_WEBHOOK_URL_LENGTH, pattern };
  }
  return out;
}

/**
 * The OpenAPI 3.1 `webhooks` entry: the `POST` the service makes to each
 * endpoint for each event of its types, as the Standard Webhooks
 * specification signs it.
 */
export function webhookDeliveries(record: unknown): Obj {
  const named = (name: string, description: string, example: string) => ({
    name,
    in: "header",
    required: true,
    description,
    schema: { type: "string" },
    example,
  });
  return {
    intentEvent: {
      post: {
        operationId: "webhook_delivery",
        summary: "One event of the feed, delivered to an endpoint",
        description: "Each endpoint gets the events of its types in the feed's order, one at a " +
          "time: an event is sent only once the one before it was acknowledged. A 2xx answer " +
          "within WEBHOOK_TIMEOUT_MS acknowledges it. Anything else — another status, a " +
          "redirect (never followed), a time-out, a connection error — is a failure: the same " +
          "event is sent again after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (a " +
          "`Retry-After` of at most an hour on a 429 or 503 replaces the next delay), and after " +
          "the last failure the endpoint is disabled (`failing`). A 410 disables it at once " +
          "(`gone`). Delivery is at least once: drop repeats by `webhook-id`. Verify with " +
          "`verifyWebhook` of the client library or any Standard Webhooks library. One process " +
          "at a time delivers to an endpoint; when it stops or dies another takes over within " +
          "30 s. While the endpoint acknowledges promptly, an event reaches it within 3 s of its " +
          "201 (docs/performance.md has the measured figures). Requests are HTTP/1.1; a " +
          "connection is kept up to 4 s for the next attempt unless the answer says " +
          "`connection: close`. The request carries no credential: the receiver authenticates " +
          "it by its `webhook-signature`, made with the endpoint's secret.",
        tags: ["webhooks"],
        // Nothing of the service's security schemes applies: the signature authenticates it.
        security: [],
        parameters: [
          named("webhook-id", "The event id, the same on every attempt.", "42"),
          named(
            "webhook-timestamp",
            "Unix seconds when this attempt was sent.",
            "1767268801",
          ),
          named(
            "webhook-signature",
            "`v1,` + base64 (padded) of HMAC-SHA256, keyed with a secret's decoded bytes, of " +
              "`{webhook-id}.{webhook-timestamp}.{body}`, once per secret in force, newest " +
              "first, separated by one space.",
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
          ),
        ],
        requestBody: {
          required: true,
          description: "The event exactly as the pull form of GET /events gives it, on one line.",
          content: {
            "application/json": {
              schema: ref("Event"),
              example: { id: "42", type: "intent.accepted", record },
            },
          },
        },
        responses: {
          "2XX": { description: "Acknowledged: the next event follows." },
          "410": { description: "Gone: the endpoint is disabled at once." },
          "default": { description: "A failure: the same event is sent again later." },
        },
      },
    },
  };
}
