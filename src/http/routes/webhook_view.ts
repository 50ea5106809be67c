/**
 * A webhook endpoint as the admin API finds and shows it: its id in a path
 * (404 without a read when it cannot be one), and its view with the next
 * event it waits to deliver and its lag as they stand.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { type Endpoint, isEndpointId, renderEndpoint, wants } from "../../webhooks/endpoint.ts";
import type { AppContext } from "../context.ts";

/**
 * How far `next_event` is looked for past the endpoint's position: pages, and
 * events and bytes per page. Only a paused or disabled endpoint with a long
 * run of other types ahead hides its next event past this (then null).
 */
const NEXT_EVENT_PAGES = 4;
const NEXT_EVENT_PAGE = 256;
const NEXT_EVENT_PAGE_BYTES = 256 << 10;

/** The endpoint id of a path, or 404 without a read when it cannot be one. */
export function endpointId(params: readonly string[]): string {
  return found(isEndpointId(params[0]) ? params[0] : null);
}

/** 404 `not_found`: no such webhook endpoint. */
export function notFound(): ServiceError {
  return new ServiceError("not_found", "no such webhook endpoint");
}

/** `value`, unless it is null: then 404, no such webhook endpoint. */
export function found<T>(value: T | null): T {
  if (value === null) throw notFound();
  return value;
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
export async function renderWebhook(app: AppContext, endpoint: Endpoint, head?: number) {
  const [feedHead, nextEvent] = await Promise.all([
    head ?? app.webhooks.feedHead(),
    nextEventOf(app, endpoint),
  ]);
  return renderEndpoint(endpoint, { head: feedHead, nextEvent });
}
