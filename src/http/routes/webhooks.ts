/**
 * The webhook admin API (docs/interface.md §11): endpoints, their secrets,
 * replays and attempts logs. What is delivered, and how, is
 * `src/delivery/`'s.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { validate } from "../../domain/validate.ts";
import {
  type Endpoint,
  isEndpointId,
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
  wants,
} from "../../webhooks/endpoint.ts";
import {
  ATTEMPTS_LIMIT,
  WebhookCreateSchema,
  WebhookReplaySchema,
  WebhookRotateSchema,
  WebhookUpdateSchema,
} from "../../webhooks/schemas.ts";
import { parseJsonBody } from "../../domain/json_body.ts";
import { newWebhookSecret } from "../../webhooks/signing.ts";
import { checkWebhookUrl } from "../../webhooks/url.ts";
import { type AppContext, readJsonBody, readJsonBytes, type RequestContext } from "../context.ts";
import { json } from "../respond.ts";
import { readPosition } from "./positions.ts";
import { delay } from "../../timing.ts";
import { readQuery, wholeNumber } from "./query.ts";

/** The query parameters of `GET /webhooks/{id}/attempts`, and the bounds of `limit`. */
export const ATTEMPTS_QUERY = ["limit"] as const;

/**
 * How far `next_event` is looked for past the endpoint's position: pages of
 * events read, and events and bytes per page. An endpoint that delivers moves
 * past events not of its types as it goes; only a paused or disabled one with
 * a long run of other types ahead can hide its next event past this (its
 * `next_event` is then null while `lag` says events follow).
 */
const NEXT_EVENT_PAGES = 4;
const NEXT_EVENT_PAGE = 256;
const NEXT_EVENT_PAGE_BYTES = 256 << 10;

/** The endpoint id of a path, or 404 without a read when it cannot be one. */
function endpointId(params: readonly string[]): string {
  const id = params[0];
  if (id === undefined || !isEndpointId(id)) throw notFound();
  return id;
}

function notFound(): ServiceError {
  return new ServiceError("not_found", "no such webhook endpoint");
}

/** 400 `invalid_webhook_url` unless the URL rule of §11 accepts `url` under the settings. */
function checkUrl(app: AppContext, url: string): void {
  const reason = checkWebhookUrl(url, {
    allowHttp: app.settings.webhooksAllowHttp,
    allowPrivate: app.settings.webhooksAllowPrivate,
  });
  if (reason !== null) throw new ServiceError("invalid_webhook_url", `url: ${reason}`);
}

/** The position of the event the endpoint waits to deliver, or null. */
async function nextEventOf(app: AppContext, endpoint: Endpoint): Promise<number | null> {
  if (endpoint.retrying !== null) return endpoint.retrying;
  let after = endpoint.position;
  for (let page = 0; page < NEXT_EVENT_PAGES; page++) {
    const events = await app.store.readEvents({
      after,
      limit: NEXT_EVENT_PAGE,
      maxBytes: NEXT_EVENT_PAGE_BYTES,
    });
    const found = events.find((event) => wants(endpoint, event.type));
    if (found) return found.position;
    if (events.length === 0) return null;
    after = events[events.length - 1].position;
  }
  return null;
}

/** The endpoint as the API shows it, with its next event and lag as they stand. */
async function render(app: AppContext, endpoint: Endpoint, head?: number) {
  const [feedHead, nextEvent] = await Promise.all([
    head ?? app.webhooks.feedHead(),
    nextEventOf(app, endpoint),
  ]);
  return renderEndpoint(endpoint, { head: feedHead, nextEvent });
}

/** `POST /webhooks`: 201 with the endpoint and its secret, shown here and at rotation only. */
export async function postWebhook(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const { value } = await readJsonBody(request, app);
  const body = validate(WebhookCreateSchema, value, "");
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
  return json(201, {
    ...renderEndpoint(created, { head: created.position, nextEvent: null }),
    secret,
  }, {
    location: `/webhooks/${created.id}`,
  });
}

/** `GET /webhooks`: every endpoint, oldest first, without secrets. */
export async function listWebhooks(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  readQuery(request, []);
  const [entries, head] = await Promise.all([
    app.webhooks.listEndpoints(),
    app.webhooks.feedHead(),
  ]);
  const items = await Promise.all(entries.map((e) => render(app, e.endpoint, head)));
  return json(200, { items });
}

/** `GET /webhooks/{id}`: the endpoint with its status, next event, lag and last attempt. */
export async function getWebhook(_request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  const entry = await app.webhooks.getEndpoint(id);
  if (entry === null) throw notFound();
  return json(200, await render(app, entry.endpoint));
}

/** `PATCH /webhooks/{id}`: url, events, description, status (pause and resume). */
export async function patchWebhook(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  const { value } = await readJsonBody(request, app);
  const patch = validate(WebhookUpdateSchema, value, "");
  if (patch.url !== undefined) checkUrl(app, patch.url);
  const changed = await app.webhooks.changeEndpoint(id, (e) => updateEndpoint(e, patch));
  if (changed === null) throw notFound();
  return json(200, await render(app, changed));
}

/** `DELETE /webhooks/{id}`: 204; its deliveries stop, its log goes. */
export async function deleteWebhook(_request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  if (!await app.webhooks.deleteEndpoint(id)) throw notFound();
  return new Response(null, {
    status: 204,
    headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });
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
export async function rotateWebhookSecret(
  request: Request,
  ctx: RequestContext,
): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  const overlapMs = await readOverlapMs(request, app);
  const secret = newWebhookSecret();
  const now = app.now().getTime();
  const changed = await app.webhooks.changeEndpoint(
    id,
    (e) => rotateSecret(e, secret, now, overlapMs),
  );
  if (changed === null) throw notFound();
  if (overlapMs < SIGNING_VIEW_MS) {
    // Counted from the commit's end: a deliverer that read before it has read again by then.
    await delay(SIGNING_VIEW_MS);
  }
  return json(200, { secret });
}

/** `POST /webhooks/{id}/replay`: deliveries start again after `after` (null: the beginning). */
export async function replayWebhook(request: Request, ctx: RequestContext): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  const { value } = await readJsonBody(request, app);
  const body = validate(WebhookReplaySchema, value, "");
  let after = 0;
  if (body.after !== null) {
    const position = await readPosition(app.store, body.after);
    if (position === null) {
      throw new ServiceError("invalid_body", "after: is not an event id this service handed out");
    }
    after = position;
  }
  const changed = await app.webhooks.changeEndpoint(id, (e) => replayEndpoint(e, after));
  if (changed === null) throw notFound();
  return json(200, await render(app, changed));
}

/** `GET /webhooks/{id}/attempts?limit=`: the latest attempts, newest first. */
export async function listWebhookAttempts(
  request: Request,
  ctx: RequestContext,
): Promise<Response> {
  const { app } = ctx;
  const id = endpointId(ctx.params);
  const limit = wholeNumber(readQuery(request, ATTEMPTS_QUERY), "limit", ATTEMPTS_LIMIT);
  if (await app.webhooks.getEndpoint(id) === null) throw notFound();
  const attempts = await app.webhooks.listAttempts(id, limit);
  return json(200, { items: attempts.map(renderAttempt) });
}
