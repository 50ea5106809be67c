/**
 * The webhook admin API (docs/interface.md §11): endpoints, their secrets,
 * replays and attempts logs, and its OpenAPI operations. What is delivered,
 * and how, is `src/delivery/`'s.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { validate } from "../../domain/validate.ts";
import {
  MAX_WEBHOOKS,
  newEndpoint,
  newEndpointId,
  renderAttempt,
  renderEndpoint,
  REPLACED_SECRET_MS,
  replayEndpoint,
  rotateSecret,
  SIGNING_VIEW_MS,
  updateEndpoint,
} from "../../webhooks/endpoint.ts";
import {
  ATTEMPTS_LIMIT,
  WebhookCreateSchema,
  WebhookReplaySchema,
  WebhookRotateSchema,
  WebhookUpdateSchema,
} from "../../webhooks/schemas.ts";
import { parseJsonBody } from "../../domain/strict_json.ts";
import { newWebhookSecret } from "../../webhooks/signing.ts";
import { checkWebhookUrl } from "../../webhooks/url.ts";
import { type AppContext, readJsonBody, readJsonBytes, type RequestContext } from "../context.ts";
import { API_HEADERS, json } from "../respond.ts";
import { delay } from "../../timing.ts";
import { eventPosition, readQuery, wholeNumber } from "./query.ts";
import { endpointId, found, notFound, renderWebhook } from "./webhook_view.ts";
import type { Route } from "../route.ts";
import { ATTEMPT_EXAMPLE, SECRET_EXAMPLE, WEBHOOK_EXAMPLE } from "../openapi/examples.ts";
import {
  ERR,
  errorResponse,
  idParameter,
  integerParameter,
  jsonBody,
  jsonResponse,
  location,
  REQUEST_ID_HEADER,
  shared,
} from "../openapi/responses.ts";
import { webhookRef } from "../openapi/webhook_components.ts";

/** 400 `invalid_webhook_url` unless the URL rule of §11 accepts `url` under the settings. */
function checkUrl({ settings }: AppContext, url: string): void {
  const reason = checkWebhookUrl(url, {
    allowHttp: settings.webhooksAllowHttp,
    allowPrivate: settings.webhooksAllowPrivate,
  });
  if (reason !== null) throw new ServiceError("invalid_webhook_url", `url: ${reason}`);
}

/** `POST /webhooks`: 201 with the endpoint and its secret, shown here and at rotation only. */
async function postWebhook(request: Request, { app }: RequestContext): Promise<Response> {
  const body = validate(WebhookCreateSchema, await readJsonBody(request, app), "");
  checkUrl(app, body.url);
  const secret = newWebhookSecret();
  const created = await app.webhooks.createEndpoint((head) =>
    newEndpoint({
      id: newEndpointId(app.now().getTime()),
      url: body.url,
      events: body.events ?? null,
      description: body.description ?? "",
      secret,
      head,
      now: app.now(),
    }), MAX_WEBHOOKS);
  if (created === "too_many") {
    throw new ServiceError(
      "too_many_webhooks",
      `at most ${MAX_WEBHOOKS} webhook endpoints; remove one first`,
    );
  }
  const view = renderEndpoint(created, { head: created.position, nextEvent: null });
  return json(201, { ...view, secret }, { location: `/webhooks/${created.id}` });
}

/** `GET /webhooks`: every endpoint, oldest first, without secrets. */
async function listWebhooks(request: Request, { app }: RequestContext): Promise<Response> {
  readQuery(request, []);
  const [entries, head] = await Promise.all([
    app.webhooks.listEndpoints(),
    app.webhooks.feedHead(),
  ]);
  const items = await Promise.all(entries.map((e) => renderWebhook(app, e.endpoint, head)));
  return json(200, { items });
}

/** `GET /webhooks/{id}`: the endpoint with its status, next event, lag and last attempt. */
async function getWebhook(_request: Request, { app, params }: RequestContext): Promise<Response> {
  const entry = found(await app.webhooks.getEndpoint(endpointId(params)));
  return json(200, await renderWebhook(app, entry.endpoint));
}

/** `PATCH /webhooks/{id}`: url, events, description, status (pause and resume). */
async function patchWebhook(request: Request, { app, params }: RequestContext): Promise<Response> {
  const id = endpointId(params);
  const patch = validate(WebhookUpdateSchema, await readJsonBody(request, app), "");
  if (patch.url !== undefined) checkUrl(app, patch.url);
  const changed = found(await app.webhooks.changeEndpoint(id, (e) => updateEndpoint(e, patch)));
  return json(200, await renderWebhook(app, changed));
}

/** `DELETE /webhooks/{id}`: 204; its deliveries stop, its log goes. */
async function deleteWebhook(_request: Request, { app, params }: RequestContext) {
  if (!await app.webhooks.deleteEndpoint(endpointId(params))) throw notFound();
  return new Response(null, { status: 204, headers: API_HEADERS });
}

/**
 * The `overlap_s` of a rotation's body, in ms: no body (or an empty one) is
 * the default; a body is strict `application/json` of its shape.
 */
async function readOverlapMs(request: Request, app: AppContext): Promise<number> {
  if (request.body === null || request.headers.get("content-length") === "0") {
    return REPLACED_SECRET_MS;
  }
  const bytes = await readJsonBytes(request, app);
  if (bytes.length === 0) return REPLACED_SECRET_MS;
  const body = validate(WebhookRotateSchema, parseJsonBody(bytes).value, "");
  return body.overlap_s === undefined ? REPLACED_SECRET_MS : body.overlap_s * 1000;
}

/**
 * `POST /webhooks/{id}/secret`: a new secret; every older one stays in force
 * at most `overlap_s` more. Deliverers on every process sign with the
 * endpoint as they read it at most {@link SIGNING_VIEW_MS} before an attempt,
 * so when that outlasts the overlap the answer waits that long: no attempt
 * that starts after the 200, on any process, is signed with a retired secret.
 */
async function rotateWebhookSecret(request: Request, { app, params }: RequestContext) {
  const id = endpointId(params);
  const overlapMs = await readOverlapMs(request, app);
  const secret = newWebhookSecret();
  const now = app.now().getTime();
  found(await app.webhooks.changeEndpoint(id, (e) => rotateSecret(e, secret, now, overlapMs)));
  if (overlapMs < SIGNING_VIEW_MS) {
    // Counted from the commit's end: a deliverer that read before it has read again by then.
    await delay(SIGNING_VIEW_MS);
  }
  return json(200, { secret });
}

/** `POST /webhooks/{id}/replay`: deliveries start again after `after` (null: the beginning). */
async function replayWebhook(request: Request, { app, params }: RequestContext) {
  const id = endpointId(params);
  const body = validate(WebhookReplaySchema, await readJsonBody(request, app), "");
  const after = await eventPosition(app.store, body.after, "after");
  const changed = found(await app.webhooks.changeEndpoint(id, (e) => replayEndpoint(e, after)));
  return json(200, await renderWebhook(app, changed));
}

/** `GET /webhooks/{id}/attempts?limit=`: the latest attempts, newest first. */
async function listWebhookAttempts(request: Request, { app, params }: RequestContext) {
  const id = endpointId(params);
  const limit = wholeNumber(readQuery(request, ["limit"]), "limit", ATTEMPTS_LIMIT);
  found(await app.webhooks.getEndpoint(id));
  const attempts = await app.webhooks.listAttempts(id, limit);
  return json(200, { items: attempts.map(renderAttempt) });
}

const ID = idParameter("The endpoint's id.");

/** The errors every operation on one endpoint may answer. */
const ON_ONE = { ...shared("405", "500", "503"), "404": ERR.notFound("webhook endpoint") };

const URL_REFUSAL = "the URL is refused by the rule of §11 (`invalid_webhook_url`)";

/** The webhook admin API's routes (docs/interface.md §11): every one the admin's. */
export const WEBHOOK_ROUTES: Route[] = [
  {
    method: "POST",
    path: "/webhooks",
    access: "admin",
    handler: postWebhook,
    operation: () => ({
      operationId: "webhooks_add",
      summary: "Register a webhook endpoint (admin)",
      description: "The endpoint receives the events that follow the feed's head at its " +
        "creation (`after`), of its types, in the feed's order, one at a time, signed with " +
        "its secret (see the `intentEvent` webhook). At most 100 endpoints.",
      tags: ["webhooks"],
      requestBody: jsonBody(webhookRef("WebhookCreate"), {
        url: WEBHOOK_EXAMPLE.url,
        events: WEBHOOK_EXAMPLE.events,
        description: WEBHOOK_EXAMPLE.description,
      }),
      responses: {
        "201": jsonResponse(
          "Registered; the secret is shown here and at rotation only.",
          webhookRef("WebhookCreated"),
          {
            example: {
              ...WEBHOOK_EXAMPLE,
              after: "41",
              last_attempt: null,
              secret: SECRET_EXAMPLE,
            },
            headers: location("/webhooks/{id}"),
          },
        ),
        "400": errorResponse(
          `The body is not strict JSON or not of the shape, ${URL_REFUSAL}, or 100 endpoints ` +
            "exist (`too_many_webhooks`).",
          ["invalid_json", "invalid_body", "invalid_webhook_url", "too_many_webhooks"],
        ),
        ...shared("405", "408", "413", "415", "500", "503"),
      },
    }),
  },
  {
    method: "GET",
    path: "/webhooks",
    access: "admin",
    handler: listWebhooks,
    operation: () => ({
      operationId: "webhooks_list",
      summary: "List the webhook endpoints, oldest first (admin)",
      tags: ["webhooks"],
      responses: {
        "200": jsonResponse("Every endpoint, without secrets.", webhookRef("WebhookList"), {
          example: { items: [WEBHOOK_EXAMPLE] },
        }),
        "400": errorResponse("A query parameter was given.", ["invalid_body"]),
        ...shared("500"),
      },
    }),
  },
  {
    method: "GET",
    path: "/webhooks/{id}",
    access: "admin",
    handler: getWebhook,
    operation: () => ({
      operationId: "webhooks_get",
      summary: "Read a webhook endpoint: status, next event, lag, last attempt (admin)",
      tags: ["webhooks"],
      parameters: [ID],
      responses: {
        "200": jsonResponse("The endpoint.", webhookRef("Webhook"), { example: WEBHOOK_EXAMPLE }),
        ...ON_ONE,
      },
    }),
  },
  {
    method: "PATCH",
    path: "/webhooks/{id}",
    access: "admin",
    handler: patchWebhook,
    operation: () => ({
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
          example: { ...WEBHOOK_EXAMPLE, status: "paused" },
        }),
        "400": errorResponse(
          `The body is not strict JSON or not of the shape, or ${URL_REFUSAL}.`,
          ["invalid_json", "invalid_body", "invalid_webhook_url"],
        ),
        ...ON_ONE,
        ...shared("408", "413", "415"),
      },
    }),
  },
  {
    method: "DELETE",
    path: "/webhooks/{id}",
    access: "admin",
    handler: deleteWebhook,
    operation: () => ({
      operationId: "webhooks_delete",
      summary: "Remove a webhook endpoint and its attempts log (admin)",
      tags: ["webhooks"],
      parameters: [ID],
      responses: {
        "204": { description: "Removed.", headers: { "X-Request-Id": REQUEST_ID_HEADER } },
        ...ON_ONE,
      },
    }),
  },
  {
    method: "POST",
    path: "/webhooks/{id}/secret",
    access: "admin",
    handler: rotateWebhookSecret,
    operation: () => ({
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
          example: { secret: SECRET_EXAMPLE },
        }),
        "400": errorResponse("The body is not strict JSON or not of the shape.", [
          "invalid_json",
          "invalid_body",
        ]),
        ...ON_ONE,
        ...shared("408", "413", "415"),
      },
    }),
  },
  {
    method: "POST",
    path: "/webhooks/{id}/replay",
    access: "admin",
    handler: replayWebhook,
    operation: () => ({
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
          example: { ...WEBHOOK_EXAMPLE, after: "17", next_event: "18", lag: 25 },
        }),
        "400": errorResponse(
          "The body is not strict JSON or not of the shape, or `after` is not an event id " +
            "this service handed out.",
          ["invalid_json", "invalid_body"],
        ),
        ...ON_ONE,
        ...shared("408", "413", "415"),
      },
    }),
  },
  {
    method: "GET",
    path: "/webhooks/{id}/attempts",
    access: "admin",
    handler: listWebhookAttempts,
    operation: () => ({
      operationId: "webhooks_attempts_list",
      summary: "The latest delivery attempts of a webhook endpoint, newest first (admin)",
      tags: ["webhooks"],
      parameters: [
        ID,
        integerParameter(
          "limit",
          ATTEMPTS_LIMIT,
          "Most attempts listed.",
          "Other query parameters, and one given twice, are 400 `invalid_body`.",
        ),
      ],
      responses: {
        "200": jsonResponse("The attempts.", webhookRef("WebhookAttemptList"), {
          example: { items: [ATTEMPT_EXAMPLE] },
        }),
        "400": errorResponse("A bad `limit`, or another query parameter.", ["invalid_body"]),
        ...ON_ONE,
      },
    }),
  },
];
