/**
 * The OpenAPI operations on intents and on the event feed.
 * @module
 */

import { ref } from "./components.ts";
import type { OpenApiExamples } from "./examples.ts";
import {
  ADMIN,
  ERR,
  errorResponse,
  examplesOf,
  idParameter,
  jsonResponse,
  type Obj,
  PUBLIC,
  REQUEST_ID_HEADER,
} from "./responses.ts";

/** `/intents`, `/intents/{id}` and `/events`. */
export function intentPaths(examples: OpenApiExamples): Obj {
  const intents = examples.intents;
  const record = intents.variant_a_ed25519.record;
  return {
    "/intents": {
      post: {
        operationId: "intents_submit",
        summary: "Submit a signed intent (public)",
        description: "The top-level members select the variant: exactly `payload` and " +
          "`signature` is Variant A, exactly `authorship` and `intent` is Variant B. The body is " +
          "parsed strictly (no duplicate members, nesting at most 32, integer literals within " +
          "±(2^53−1) unless written as JCS writes the double they parse to). Checks run in this " +
          "order: 415, 413, 400 (JSON, shape, encodings, signature, missing template or " +
          "policy), 409, then 201. A request whose authorship does not verify never learns " +
          "whether an id exists. 503 `unavailable` means nothing was stored and the same body " +
          "may be sent again.",
        tags: ["intents"],
        security: PUBLIC,
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: { oneOf: [ref("VariantA"), ref("VariantB")] },
              examples: examplesOf(intents, (key) => intents[key].body),
            },
          },
        },
        responses: {
          "201": jsonResponse("Stored.", ref("IntentRecord"), {
            examples: examplesOf(intents, (key) => intents[key].record),
            headers: { Location: { description: "/intents/{id}", schema: { type: "string" } } },
          }),
          "400": ERR.invalidJsonBody([
            "invalid_signature",
            "unsigned_not_permitted",
            "template_not_found",
            "policy_not_found",
          ]),
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "409": errorResponse("An intent with this id exists.", ["intent_exists"]),
          "413": ERR.tooLarge,
          "415": ERR.mediaType,
          "500": ERR.internal,
          "503": ERR.unavailable,
        },
      },
      get: {
        operationId: "intents_list",
        summary: "List stored intents, newest first (admin)",
        tags: ["intents"],
        security: ADMIN,
        parameters: [
          {
            name: "limit",
            in: "query",
            required: false,
            schema: { type: "integer", minimum: 1, maximum: 100, default: 20 },
          },
          {
            name: "cursor",
            in: "query",
            required: false,
            description: "The `cursor` of the previous page.",
            schema: { type: "string" },
          },
        ],
        responses: {
          "200": jsonResponse("A page.", ref("IntentPage"), {
            example: { items: [record], cursor: null },
          }),
          "400": errorResponse("A bad limit or cursor.", ["invalid_body"]),
          "401": ERR.unauthorized,
          "500": ERR.internal,
        },
      },
    },
    "/intents/{id}": {
      get: {
        operationId: "intents_get",
        summary: "Read a stored intent (admin)",
        tags: ["intents"],
        security: ADMIN,
        parameters: [idParameter("The intent id (URL-encoded; UUIDs match in any case).")],
        responses: {
          "200": jsonResponse("The stored intent.", ref("IntentRecord"), { example: record }),
          "401": ERR.unauthorized,
          "404": ERR.notFound("intent"),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
    "/events": {
      get: {
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
          "once their bodies pass about 1 MiB. Unknown query parameters are ignored.",
        tags: ["events"],
        security: [{ adminBearer: [] }, { eventsBearer: [] }],
        parameters: [
          {
            name: "after",
            in: "query",
            required: false,
            description: "An event id: start after it. Absent: from the beginning.",
            schema: { type: "string", maxLength: 128 },
          },
          {
            name: "limit",
            in: "query",
            required: false,
            description: "Most events in a page (pull form).",
            schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
          },
          {
            name: "wait",
            in: "query",
            required: false,
            description: "Seconds to hold the request while nothing follows `after` (pull form).",
            schema: { type: "integer", minimum: 0, maximum: 30, default: 0 },
          },
          {
            name: "Last-Event-ID",
            in: "header",
            required: false,
            description: "Stream form: start after this event id (wins over `after`).",
            schema: { type: "string", maxLength: 128 },
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
            "`after` or `Last-Event-ID` is not an event id this service handed out, or a bad " +
              "`limit` or `wait`.",
            ["invalid_body"],
          ),
          "401": ERR.unauthorized,
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
  };
}
