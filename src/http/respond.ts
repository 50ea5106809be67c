/**
 * Response helpers: JSON bodies and the `{message, code}` error body.
 * @module
 */

import { ServiceError } from "../errors.ts";

/** Headers every API response carries. */
const BASE_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/** A JSON response from a value or from JSON text already rendered. */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return new Response(text, {
    status,
    headers: { ...BASE_HEADERS, "content-type": "application/json", ...headers },
  });
}

/** The response for a {@link ServiceError}. */
export function errorResponse(error: ServiceError): Response {
  return json(error.status, { message: error.message, code: error.code }, error.headers);
}

/** The bare 500: it says nothing about the cause, which goes to the log. */
export function internalErrorResponse(): Response {
  return errorResponse(new ServiceError(500, "internal", "internal error"));
}
