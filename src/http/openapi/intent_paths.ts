/**
 * The OpenAPI operations on intents and on the event feed.
 * @module
 */

import { EVENTS_LIMIT, EVENTS_QUERY, EVENTS_WAIT_S } from "../routes/events.ts";
import { LIST_LIMIT, LIST_QUERY } from "../routes/intents.ts";
import { ref } from "./components.ts";
import { decisionOperation } from "./decision_paths.ts";
import type { OpenApiExamples } from "./examples.ts";
import { tooManyRequests } from "./limits.ts";
import {
  ERR,
  errorResponse,
  examplesOf,
  idParameter,
  jsonResponse,
  type Obj,
  REQUEST_ID_HEADER,
} from "./responses.ts";

/** A sentence on the query parameters an operation refuses. */
function strictQuery(known: readonly string[]): string {
  const names = known.map((name) => `\`${name}\``).join(", ");
  return `Query parameters other than ${names}, and a parameter given twice, are 400 ` +
    "`invalid_body` naming the parameter.";
}

/** An integer query parameter with its bounds and default. */
function integerParameter(
  name: string,
  bounds: { min: number; max: number; fallback: number },
  description: string,
): Obj {
  return {
    name,
    in: "query",
    required: false,
    description: `${description} Decimal digits.`,
    schema: { type: "integer", minimum: bounds.min, maximum: bounds.max, default: bounds.fallback },
  };
}

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
          "order: 429 for the client address (one token), 415, 413, 400 (JSON, shape, " +
          "encodings), 429 for the client address (the further tokens of its work: max(1, " +
          "signatures carried, public keys named) in all), 400 missing template or policy, " +
          "400 signature (a Multisig stops at its first signature that does not verify), 429 " +
          "for a key that signed, the governing document's 400s and 403, the id (409, or 200 " +
          "for the same signed submission sent again), 429 `too_many_pending`, then 201 (or " +
          "202). A request whose authorship does not verify never learns whether an id " +
          "exists. A retry is safe: the " +
          "same signed body again (equal as JSON values) answers 200 with " +
          "`Idempotent-Replayed: true` and the record as it stands now. 503 `unavailable` " +
          "means nothing was stored and the same body may be sent again.",
        tags: ["intents"],
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
          "200": jsonResponse(
            "The same signed submission was stored before (a retry after a lost answer): " +
              "nothing is stored now; the record as it stands now, whatever its state.",
            ref("IntentRecord"),
            {
              headers: {
                Location: { description: "/intents/{id}", schema: { type: "string" } },
                "Idempotent-Replayed": {
                  description: "`true`: this answer replays an earlier submission.",
                  schema: { type: "string", enum: ["true"] },
                },
              },
            },
          ),
          "201": jsonResponse("Stored and accepted.", ref("IntentRecord"), {
            examples: examplesOf(intents, (key) => intents[key].record),
            headers: { Location: { description: "/intents/{id}", schema: { type: "string" } } },
          }),
          "202": jsonResponse(
            "Stored pending: under a governed document whose threshold the submission's " +
              "signers do not reach; approvals arrive through POST /intents/{id}/approvals. " +
              "The id is taken.",
            ref("IntentRecord"),
            {
              headers: { Location: { description: "/intents/{id}", schema: { type: "string" } } },
            },
          ),
          "400": ERR.invalidJsonBody([
            "invalid_signature",
            "unsigned_not_permitted",
            "template_not_found",
            "policy_not_found",
            "quorum_mismatch",
          ]),
          "403": errorResponse(
            "Under a governed document: a key that signed is not one of its signers.",
            ["signer_not_authorized"],
          ),
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "409": errorResponse(
            "An intent with this id exists, and this body is not the signed submission that " +
              "took it (`Unsigned` bodies are never replayed).",
            ["intent_exists"],
          ),
          "413": ERR.tooLarge,
          "415": ERR.mediaType,
          "429": tooManyRequests(["too_many_pending"]),
          "500": ERR.internal,
          "503": ERR.unavailable,
        },
      },
      get: {
        operationId: "intents_list",
        summary: "List stored intents, newest first (admin)",
        description: strictQuery(LIST_QUERY),
        tags: ["intents"],
        parameters: [
          integerParameter("limit", LIST_LIMIT, "Most intents in a page."),
          {
            name: "cursor",
            in: "query",
            required: false,
            description: "The `cursor` of the previous page; absent or empty: the first page.",
            // The cursors handed out are OpaqueIds; an empty one stands for none.
            schema: { type: "string", maxLength: 128, pattern: "^[\\x21-\\x7e]*$" },
          },
          {
            name: "state",
            in: "query",
            required: false,
            description: "Only intents in this state now. A filtered page may hold fewer than " +
              "`limit` intents and still have a `cursor`: a page looks at a bounded number of " +
              "intents.",
            schema: { type: "string", enum: ["pending", "accepted", "expired", "rejected"] },
          },
        ],
        responses: {
          "200": jsonResponse("A page.", ref("IntentPage"), {
            example: { items: [record], cursor: null },
          }),
          "400": errorResponse(
            "A bad `limit` or `cursor`, or an unknown or repeated query parameter.",
            ["invalid_body"],
          ),
          "500": ERR.internal,
        },
      },
    },
    "/intents/{id}": {
      get: {
        operationId: "intents_get",
        summary: "Read a stored intent (admin)",
        tags: ["intents"],
        parameters: [idParameter("The intent id (URL-encoded; UUIDs match in any case).")],
        responses: {
          "200": jsonResponse("The stored intent.", ref("IntentRecord"), { example: record }),
          "404": ERR.notFound("intent"),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
    "/intents/{id}/approvals": {
      get: {
        operationId: "approvals_get",
        summary: "What a pending intent waits for (public)",
        description: "For a pending intent under a governed document: the object every " +
          "approver signs, its challenge for passkeys (and the challenge of a rejection), the " +
          "quorum and who has approved or rejected. For an accepted, expired or rejected one, " +
          "its state only. The id is shared among the signers. Each request spends a token of " +
          "the client address, so that ids cannot be probed at line rate.",
        tags: ["approvals"],
        parameters: [idParameter("The intent id.")],
        responses: {
          "200": jsonResponse("The view.", ref("ApprovalView")),
          "404": ERR.notFound("intent under a governed document"),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
      post: decisionOperation("approval"),
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
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
  };
}
