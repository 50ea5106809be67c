/**
 * The OpenAPI operations of the webhook admin API (docs/interface.md §11),
 * and the delivery itself as an OpenAPI 3.1 `webhooks` entry: the request the
 * service makes to an endpoint.
 * @module
 */

import type { JsonSchema } from "@valibot/to-json-schema";
import { ref } from "./components.ts";
import {
  ERR,
  errorResponse,
  idParameter,
  jsonResponse,
  type Obj,
  REQUEST_ID_HEADER,
} from "./responses.ts";
import { webhookRef } from "./webhook_components.ts";
import { ATTEMPTS_LIMIT } from "../../webhooks/schemas.ts";

const ID = idParameter("The endpoint's id.");

const ATTEMPT = {
  event_id: "42",
  attempt: 1,
  at: "2026-01-01T12:00:01.000Z",
  status: 204,
  error: null,
  duration_ms: 38,
};

const ENDPOINT = {
  id: "wh_0193f2b1c4d87a4e9b1f2c3d4e5f6a7b",
  url: "https://hooks.example/intents",
  events: ["intent.accepted"],
  description: "orchestrator",
  status: "active",
  created_at: "2026-01-01T12:00:00.000Z",
  after: "42",
  next_event: null,
  lag: 0,
  last_attempt: ATTEMPT,
};

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwtWwpwaB9zSM=";

/** The request body of the operations that take one. */
function jsonBody(schema: JsonSchema, example: unknown): Obj {
  return { required: true, content: { "application/json": { schema, example } } };
}

/** The errors every operation may answer. */
const ALWAYS = {
  "405": ERR.methodNotAllowed,
  "500": ERR.internal,
  "503": ERR.unavailable,
};

/** The errors every operation on one endpoint may answer. */
const ON_ONE = { ...ALWAYS, "404": ERR.notFound("webhook endpoint") };

/** The errors of an operation that reads a JSON body. */
const WITH_BODY = { "408": ERR.timeout, "413": ERR.tooLarge, "415": ERR.mediaType };

const URL_REFUSAL = "the URL is refused by the rule of §11 (`invalid_webhook_url`)";

/** `/webhooks`, `/webhooks/{id}` and its `secret`, `replay` and `attempts`. */
export function webhookPaths(): Obj {
  return {
    "/webhooks": {
      post: {
        operationId: "webhooks_add",
        summary: "Register a webhook endpoint (admin)",
        description: "The endpoint receives the events that follow the feed's head at its " +
          "creation (`after`), of its types, in the feed's order, one at a time, signed with " +
          "its secret (see the `intentEvent` webhook). At most 100 endpoints.",
        tags: ["webhooks"],
        requestBody: jsonBody(webhookRef("WebhookCreate"), {
          url: ENDPOINT.url,
          events: ENDPOINT.events,
          description: ENDPOINT.description,
        }),
        responses: {
          "201": jsonResponse(
            "Registered; the secret is shown here and at rotation only.",
            webhookRef("WebhookCreated"),
            {
              example: { ...ENDPOINT, after: "41", last_attempt: null, secret: SECRET },
              headers: { Location: { description: "/webhooks/{id}", schema: { type: "string" } } },
            },
          ),
          "400": errorResponse(
            `The body is not strict JSON or not of the shape, ${URL_REFUSAL}, or 100 endpoints ` +
              "exist (`too_many_webhooks`).",
            ["invalid_json", "invalid_body", "invalid_webhook_url", "too_many_webhooks"],
          ),
          ...ALWAYS,
          ...WITH_BODY,
        },
      },
      get: {
        operationId: "webhooks_list",
        summary: "List the webhook endpoints, oldest first (admin)",
        tags: ["webhooks"],
        responses: {
          "200": jsonResponse("Every endpoint, without secrets.", webhookRef("WebhookList"), {
            example: { items: [ENDPOINT] },
          }),
          "400": errorResponse("A query parameter was given.", ["invalid_body"]),
          "500": ERR.internal,
        },
      },
    },
    "/webhooks/{id}": {
      get: {
        operationId: "webhooks_get",
        summary: "Read a webhook endpoint: status, next event, lag, last attempt (admin)",
        tags: ["webhooks"],
        parameters: [ID],
        responses: {
          "200": jsonResponse("The endpoint.", webhookRef("Webhook"), { example: ENDPOINT }),
          ...ON_ONE,
        },
      },
      patch: {
        operationId: "webhooks_update",
        summary: "Change a webhook endpoint: url, events, description, pause and resume (admin)",
        description: "`status` `paused` stops its deliveries; `active` resumes a paused or " +
          "disabled endpoint where it stopped: the event it waits to deliver is tried at once, " +
          "on a fresh retry schedule (as it is after a new `url`).",
        tags: ["webhooks"],
        parameters: [ID],
        requestBody: jsonBody(webhookRef("WebhookUpdate"), { status: "paused" }),
        responses: {
          "200": jsonResponse("The endpoint as changed.", webhookRef("Webhook"), {
            example: { ...ENDPOINT, status: "paused" },
          }),
          "400": errorResponse(
            `The body is not strict JSON or not of the shape, or ${URL_REFUSAL}.`,
            ["invalid_json", "invalid_body", "invalid_webhook_url"],
          ),
          ...ON_ONE,
          ...WITH_BODY,
        },
      },
      delete: {
        operationId: "webhooks_delete",
        summary: "Remove a webhook endpoint and its attempts log (admin)",
        tags: ["webhooks"],
        parameters: [ID],
        responses: {
          "204": { description: "Removed.", headers: { "X-Request-Id": REQUEST_ID_HEADER } },
          ...ON_ONE,
        },
      },
    },
    "/webhooks/{id}/secret": {
      post: {
        operationId: "webhooks_secret_rotate",
        summary: "Rotate a webhook endpoint's secret (admin)",
        description: "A new secret signs every delivery from now on; every older secret " +
          "signs them too for at most `overlap_s` more seconds, none longer than it already " +
          "had (newest first in `webhook-signature`). The body is optional (none: 86400); with " +
          "0 (a secret that leaked), no attempt that starts after the 200, on any process, is " +
          "signed with the older secrets: the answer waits about a second for that.",
        tags: ["webhooks"],
        parameters: [ID],
        requestBody: {
          required: false,
          content: {
            "application/json": { schema: webhookRef("WebhookRotate"), example: { overlap_s: 0 } },
          },
        },
        responses: {
          "200": jsonResponse("The new secret, shown here only.", webhookRef("WebhookSecret"), {
            example: { secret: SECRET },
          }),
          "400": errorResponse("The body is not strict JSON or not of the shape.", [
            "invalid_json",
            "invalid_body",
          ]),
          ...ON_ONE,
          ...WITH_BODY,
        },
      },
    },
    "/webhooks/{id}/replay": {
      post: {
        operationId: "webhooks_replay",
        summary: "Deliver again after an event (admin)",
        description: "Its deliveries start again after `after` (null: the feed's beginning), " +
          "on a fresh retry schedule: a consumer that lost data asks for it again. Its status " +
          "is left as it is.",
        tags: ["webhooks"],
        parameters: [ID],
        requestBody: jsonBody(webhookRef("WebhookReplay"), { after: "17" }),
        responses: {
          "200": jsonResponse("The endpoint, delivering after `after`.", webhookRef("Webhook"), {
            example: { ...ENDPOINT, after: "17", next_event: "18", lag: 25 },
          }),
          "400": errorResponse(
            "The body is not strict JSON or not of the shape, or `after` is not an event id " +
              "this service handed out.",
            ["invalid_json", "invalid_body"],
          ),
          ...ON_ONE,
          ...WITH_BODY,
        },
      },
    },
    "/webhooks/{id}/attempts": {
      get: {
        operationId: "webhooks_attempts_list",
        summary: "The latest delivery attempts of a webhook endpoint, newest first (admin)",
        tags: ["webhooks"],
        parameters: [ID, {
          name: "limit",
          in: "query",
          required: false,
          description: "Most attempts listed. Decimal digits. Other query parameters, and one " +
            "given twice, are 400 `invalid_body`.",
          schema: {
            type: "integer",
            minimum: ATTEMPTS_LIMIT.min,
            maximum: ATTEMPTS_LIMIT.max,
            default: ATTEMPTS_LIMIT.fallback,
          },
        }],
        responses: {
          "200": jsonResponse("The attempts.", webhookRef("WebhookAttemptList"), {
            example: { items: [ATTEMPT] },
          }),
          "400": errorResponse("A bad `limit`, or another query parameter.", ["invalid_body"]),
          ...ON_ONE,
        },
      },
    },
  };
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
