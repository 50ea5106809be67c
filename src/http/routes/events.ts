/**
 * `GET /events` (docs/interface.md §9), and its OpenAPI operation: the feed as
 * a JSON page (`after`, `limit`, `wait` long-poll) or a Server-Sent Events
 * stream (`Last-Event-ID`). A stream reads its next page only once the client
 * has taken the previous one, so a slow reader holds one page, not the feed.
 * @module
 */

import { renderEvent, renderIntent } from "../../domain/record.ts";
import type { AppContext, RequestContext } from "../context.ts";
import { API_HEADERS, json } from "../respond.ts";
import { eventPosition, readQuery, wholeNumber } from "./query.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import {
  errorResponse,
  integerParameter,
  REQUEST_ID_HEADER,
  shared,
  strictQuery,
} from "../openapi/responses.ts";

/** The query parameters of `GET /events`, and the bounds of `limit` and `wait` (seconds). */
export const EVENTS_QUERY = ["after", "limit", "wait"] as const;
export const EVENTS_LIMIT = { min: 1, max: 1000, fallback: 100 } as const;
export const EVENTS_WAIT_S = { min: 0, max: 30, fallback: 0 } as const;
/** A page stops early once its bodies pass this many bytes (a page may be shorter than `limit`). */
const PAGE_BYTES = 1 << 20;
/**
 * Events per stream chunk, and their bodies' bytes, at most: what a slow
 * reader makes the server hold (one chunk queued, one being read).
 */
const STREAM_PAGE = 128;
const STREAM_PAGE_BYTES = 64 << 10;

/** True when the client asks for the stream form. */
function wantsStream(request: Request): boolean {
  const accept = request.headers.get("accept");
  if (!accept) return false;
  return accept.split(",").some((range) =>
    range.split(";", 1)[0].trim().toLowerCase() === "text/event-stream"
  );
}

async function getEvents(request: Request, { app }: RequestContext): Promise<Response> {
  const params = readQuery(request, EVENTS_QUERY);
  const limit = wholeNumber(params, "limit", EVENTS_LIMIT);
  const wait = wholeNumber(params, "wait", EVENTS_WAIT_S);
  const given = params.get("after");
  if (wantsStream(request)) {
    const lastEventId = request.headers.get("last-event-id");
    const name = lastEventId === null ? "after" : "Last-Event-ID";
    return eventStream(request, app, await eventPosition(app.store, lastEventId ?? given, name));
  }
  const after = await eventPosition(app.store, given, "after");
  const read = () => app.store.readEvents({ after, limit, maxBytes: PAGE_BYTES });
  let events = await read();
  if (events.length === 0 && wait > 0) {
    const signal = AbortSignal.any([request.signal, app.stopping]);
    if (await app.store.waitForEvents(after, { timeoutMs: wait * 1000, signal })) {
      events = await read();
    }
  }
  app.metrics.eventsSent("pull", events.length);
  const last = events.at(-1);
  const next = last ? String(last.position) : given;
  return json(
    200,
    `{"events":[${events.map(renderEvent).join(",")}],"next":${JSON.stringify(next)}}`,
  );
}

const encoder = new TextEncoder();

/** The SSE stream of the events after `after`, live until the client or the server leaves. */
function eventStream(request: Request, app: AppContext, after: number): Response {
  const gone = new AbortController();
  const signal = AbortSignal.any([gone.signal, request.signal, app.stopping]);
  let last = after;
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    gone.abort();
    app.metrics.streamsOpen(-1);
  };
  app.metrics.streamsOpen(1);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Sent at once, so that clients and proxies see the stream has started.
      controller.enqueue(encoder.encode(": intents feed\n\n"));
    },
    async pull(controller) {
      try {
        for (;;) {
          if (signal.aborted) {
            close();
            controller.close();
            return;
          }
          const events = await app.store.readEvents({
            after: last,
            limit: STREAM_PAGE,
            maxBytes: STREAM_PAGE_BYTES,
          });
          if (events.length > 0) {
            const text = events.map(({ position, type, intent }) =>
              `id: ${position}\nevent: ${type}\ndata: ${renderIntent(intent)}\n\n`
            ).join("");
            last = events[events.length - 1].position;
            app.metrics.eventsSent("stream", events.length);
            controller.enqueue(encoder.encode(text));
            return;
          }
          const woken = await app.store.waitForEvents(last, {
            // An idle stream sends a comment this often (the contract: at least every 15 s).
            timeoutMs: app.settings.eventsKeepaliveMs,
            signal,
          });
          if (!woken && !signal.aborted) {
            controller.enqueue(encoder.encode(": keep-alive\n\n"));
            return;
          }
        }
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    cancel() {
      close();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      ...API_HEADERS,
      "content-type": "text/event-stream; charset=utf-8",
      // Proxies that buffer responses (nginx) would hold the events back.
      "x-accel-buffering": "no",
    },
  });
}

/** The feed's route (docs/interface.md §9): the admin's, or the events token's. */
export const EVENT_ROUTES: Route[] = [{
  method: "GET",
  path: "/events",
  access: "admin_or_events",
  handler: getEvents,
  operation: ({ intents: { variant_a_ed25519: { record } } }) => ({
    operationId: "events_list",
    summary: "The feed of accepted intents, in one order (admin or events token)",
    description: "Every accepted intent is one event, in one order that is the same for " +
      "every reader, across every process sharing the storage. Reading after an event id " +
      "gives exactly the events that follow it: a consumer that keeps the last id it " +
      "processed never misses or repeats one. Two forms: with `Accept: text/event-stream`, " +
      "a Server-Sent Events stream (`id`, `event`, `data` = the record on one line) that " +
      "starts after `Last-Event-ID` (else `after`), delivers the history, then new events " +
      "within 2 seconds of their 201, with a comment line at least every 15 seconds while " +
      "idle; otherwise a JSON page. A page holds at most `limit` events and stops early " +
      `once their bodies pass about 1 MiB. ${strictQuery(EVENTS_QUERY)}`,
    tags: ["events"],
    parameters: [
      {
        name: "after",
        in: "query",
        required: false,
        description: "An event id: start after it. Absent: from the beginning.",
        schema: ref("OpaqueId"),
      },
      integerParameter("limit", EVENTS_LIMIT, "Most events in a page (pull form)."),
      integerParameter(
        "wait",
        EVENTS_WAIT_S,
        "Seconds to hold the request while nothing follows `after` (pull form).",
      ),
      {
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: "Stream form: start after this event id (wins over `after`).",
        schema: ref("OpaqueId"),
      },
    ],
    responses: {
      "200": {
        description: "A page of events (JSON), or the event stream (`text/event-stream`).",
        headers: { "X-Request-Id": REQUEST_ID_HEADER },
        content: {
          "application/json": {
            schema: ref("EventPage"),
            example: {
              events: [{ id: "1", type: "intent.accepted", record }],
              next: "1",
            },
          },
          "text/event-stream": {
            schema: { type: "string" },
            example: `id: 1\nevent: intent.accepted\ndata: ${JSON.stringify(record)}\n\n`,
          },
        },
      },
      "400": errorResponse(
        "`after` or `Last-Event-ID` is not an event id this service handed out, a bad " +
          "`limit` or `wait`, or an unknown or repeated query parameter.",
        ["invalid_body"],
      ),
      ...shared("405", "500"),
    },
  }),
}];
