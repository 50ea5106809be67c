/**
 * Building blocks of the OpenAPI document's operations: responses, error
 * responses by code, parameters, and the rate limits' headers and refusals
 * (docs/interface.md §12).
 * @module
 */

import type { JsonSchema } from "@valibot/to-json-schema";
import type { ErrorCode } from "../../errors.ts";
import { ref } from "./components.ts";

/** A plain JSON object of the document. */
export type Obj = Record<string, unknown>;

/** A response header whose value is a string. */
export function header(description: string): Obj {
  return { description, schema: { type: "string" } };
}

/** The `X-Request-Id` response header. */
export const REQUEST_ID_HEADER = header(
  "The request id: echoed when the client sent a valid one, else generated.",
);

/** The `Location` header of an answer that names what it stored, e.g. `/intents/{id}`. */
export function location(template: string): Obj {
  return { Location: header(template) };
}

/** An error response listing the codes it may carry, and any headers beside `X-Request-Id`. */
export function errorResponse(
  description: string,
  codes: readonly ErrorCode[],
  headers: Obj = {},
): Obj {
  return {
    description: `${description} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
    headers: { "X-Request-Id": REQUEST_ID_HEADER, ...headers },
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
  notFound: (what: string) => errorResponse(`No such ${what}.`, ["not_found"]),
};

/** The error responses many operations share, by status. */
const SHARED = {
  "405": errorResponse(
    "The method is not allowed on this path.",
    ["method_not_allowed"],
    { Allow: header("The allowed methods.") },
  ),
  "408": errorResponse("The body did not arrive in time.", ["request_timeout"]),
  "413": errorResponse("The body is larger than MAX_BODY_BYTES.", ["payload_too_large"]),
  "415": errorResponse("Content-Type is not application/json.", ["unsupported_media_type"]),
  "500": errorResponse("An internal error; the body says nothing about the cause.", ["internal"]),
  "503": errorResponse(
    "The storage cannot take writes now (full, read-only, or locked by another process), or " +
      "the server stopped while the body arrived; nothing was stored, and the request may be " +
      "sent again.",
    ["unavailable"],
  ),
};

/** The shared error responses of `statuses`. */
export function shared(...statuses: (keyof typeof SHARED)[]): Obj {
  return Object.fromEntries(statuses.map((status) => [status, SHARED[status]]));
}

/** A JSON success response; `extra` may carry `headers`, `example` or `examples`. */
export function jsonResponse(description: string, schema: JsonSchema, extra: Obj = {}): Obj {
  const { headers, ...media } = extra as { headers?: Obj };
  return {
    description,
    headers: { "X-Request-Id": REQUEST_ID_HEADER, ...headers },
    content: { "application/json": { schema, ...media } },
  };
}

/** A required JSON request body of the schema, with an example. */
export function jsonBody(schema: JsonSchema, example: unknown): Obj {
  return { required: true, content: { "application/json": { schema, example } } };
}

/** The `{id}` path parameter. */
export function idParameter(description: string): Obj {
  return { name: "id", in: "path", required: true, description, schema: { type: "string" } };
}

/** A sentence on the query parameters an operation refuses. */
export function strictQuery(known: readonly string[]): string {
  const names = known.map((name) => `\`${name}\``).join(", ");
  return `Query parameters other than ${names}, and a parameter given twice, are 400 ` +
    "`invalid_body` naming the parameter.";
}

/** An integer query parameter with its bounds and default; `more` follows "Decimal digits." */
export function integerParameter(
  name: string,
  bounds: { min: number; max: number; fallback: number },
  description: string,
  more = "",
): Obj {
  return {
    name,
    in: "query",
    required: false,
    description: `${description} Decimal digits.${more && ` ${more}`}`,
    schema: { type: "integer", minimum: bounds.min, maximum: bounds.max, default: bounds.fallback },
  };
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

/** The headers every answer of a limited operation carries while its limit is on. */
const RATE_LIMIT_HEADERS: Obj = {
  "RateLimit-Policy": header(
    'draft-ietf-httpapi-ratelimit-headers-10: `"address";q=<2 × ' +
      'RATE_LIMIT_PER_ADDRESS>;w=2`; a 429 for a key adds `"signer";q=<2 × ' +
      "RATE_LIMIT_PER_SIGNER>;w=2`. Absent while the limit is off (0). A submission, " +
      "approval or rejection spends max(1, signatures carried, public keys named) tokens; " +
      "another request one.",
  ),
  RateLimit: header(
    '`"address";r=<tokens left>;t=<seconds until the bucket is full, ' +
      'rounded up>`, and on a 429 for a key `"signer";r=…;t=…` the same way. Counted per ' +
      "process.",
  ),
};

/** The `Retry-After` header of a 429. */
const RETRY_AFTER: Obj = {
  "Retry-After": {
    description: "Whole seconds, at least 1, before the request would be let in.",
    schema: { type: "integer", minimum: 1 },
  },
};

/**
 * The 429 of a limited operation: `rate_limited` (the client address, or a
 * key that signed, has no request left) and the other codes given.
 */
export function tooManyRequests(codes: readonly ErrorCode[] = []): Obj {
  return errorResponse(
    "A limit of this process: the client address, checked before anything else, or a key " +
      "that signed, checked once its signature verified (`rate_limited`)" +
      (codes.includes("too_many_pending")
        ? "; or a key that signed has MAX_PENDING_PER_SIGNER intents pending under this " +
          "document (`too_many_pending`: the id is not taken)."
        : "."),
    ["rate_limited", ...codes],
    RETRY_AFTER,
  );
}

/**
 * The operation with the rate-limit headers on every one of its responses,
 * and its 429: {@link tooManyRequests}, unless the operation names more
 * codes in a 429 of its own.
 */
export function rateLimited(operation: Obj): Obj {
  const own = operation.responses as Obj;
  const responses: Obj = { ...own, "429": own["429"] ?? tooManyRequests() };
  for (const [status, response] of Object.entries(responses)) {
    const r = response as Obj;
    responses[status] = { ...r, headers: { ...(r.headers as Obj), ...RATE_LIMIT_HEADERS } };
  }
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a < b ? -1 : 1));
  return { ...operation, responses: sorted };
}

/** The `"auth"` policy's headers: on a 401, and on a 429 for wrong tokens. */
const AUTH_HEADERS: Obj = {
  "RateLimit-Policy": header(
    '`"auth";q=<RATE_LIMIT_AUTH_FAILURES>;w=60`: wrong or missing tokens one ' +
      "client address may send a minute. Absent while the limit is off (0).",
  ),
  RateLimit: header(
    '`"auth";r=<wrong tokens left>;t=<seconds until the budget is full, ' +
      "rounded up>`. Counted per process.",
  ),
};

/**
 * The refusals of an operation that needs a bearer token: 401 for a wrong or
 * missing one, and 429 once the address has sent too many, before its token
 * is compared.
 */
export const TOKEN_REFUSALS: Obj = {
  "401": errorResponse("A valid bearer token is required.", ["unauthorized"], {
    "WWW-Authenticate": header("`Bearer`"),
    ...AUTH_HEADERS,
  }),
  "429": errorResponse(
    "This client address sent more wrong or missing tokens than RATE_LIMIT_AUTH_FAILURES " +
      "a minute: every operation that needs a token is refused, the right token too, until " +
      "its budget refills (`rate_limited`).",
    ["rate_limited"],
    { ...AUTH_HEADERS, ...RETRY_AFTER },
  ),
};
