/**
 * Building blocks of the OpenAPI document's operations: responses, error
 * responses by code and parameters.
 * @module
 */

import type { JsonSchema } from "@valibot/to-json-schema";
import type { ErrorCode } from "../../errors.ts";
import { ref } from "./components.ts";

/** A plain JSON object of the document. */
export type Obj = Record<string, unknown>;

/** The `X-Request-Id` response header. */
export const REQUEST_ID_HEADER = {
  description: "The request id: echoed when the client sent a valid one, else generated.",
  schema: { type: "string" },
};

/** An error response listing the codes it may carry. */
export function errorResponse(description: string, codes: readonly ErrorCode[]): Obj {
  return {
    description: `${description} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
    headers: { "X-Request-Id": REQUEST_ID_HEADER },
    content: {
      "application/json": {
        schema: {
          allOf: [ref("ErrorBody"), { type: "object", properties: { code: { enum: codes } } }],
        },
      },
    },
  };
}

/** Error responses that many operations share. */
export const ERR = {
  invalidJsonBody: (extra: ErrorCode[] = []) =>
    errorResponse("The body is not strict JSON or does not have the required shape.", [
      "invalid_json",
      "invalid_body",
      ...extra,
    ]),
  unauthorized: {
    ...errorResponse("A valid bearer token is required.", ["unauthorized"]),
    headers: {
      "X-Request-Id": REQUEST_ID_HEADER,
      "WWW-Authenticate": { description: "`Bearer`", schema: { type: "string" } },
    },
  },
  notFound: (what: string) => errorResponse(`No such ${what}.`, ["not_found"]),
  timeout: errorResponse("The body did not arrive in time.", ["request_timeout"]),
  tooLarge: errorResponse("The body is larger than MAX_BODY_BYTES.", ["payload_too_large"]),
  mediaType: errorResponse("Content-Type is not application/json.", ["unsupported_media_type"]),
  methodNotAllowed: {
    ...errorResponse("The method is not allowed on this path.", ["method_not_allowed"]),
    headers: {
      "X-Request-Id": REQUEST_ID_HEADER,
      Allow: { description: "The allowed methods.", schema: { type: "string" } },
    },
  },
  internal: errorResponse("An internal error; the body says nothing about the cause.", [
    "internal",
  ]),
  unavailable: errorResponse(
    "The storage cannot take writes now (full, read-only, or locked by another process), or " +
      "the server stopped while the body arrived; nothing was stored, and the request may be " +
      "sent again.",
    ["unavailable"],
  ),
};

/** A JSON success response; `extra` may carry `headers`, `example` or `examples`. */
export function jsonResponse(description: string, schema: JsonSchema, extra: Obj = {}): Obj {
  const { headers, ...media } = extra as { headers?: Obj };
  return {
    description,
    headers: { "X-Request-Id": REQUEST_ID_HEADER, ...headers },
    content: { "application/json": { schema, ...media } },
  };
}

/** The `{id}` path parameter. */
export function idParameter(description: string): Obj {
  return { name: "id", in: "path", required: true, description, schema: { type: "string" } };
}

/** Named examples, each with a summary and a value. */
export function examplesOf(
  entries: Record<string, { summary: string }>,
  pick: (key: string) => unknown,
): Obj {
  const out: Obj = {};
  for (const [key, entry] of Object.entries(entries)) {
    out[key] = { summary: entry.summary, value: pick(key) };
  }
  return out;
}
