/**
 * Response helpers: JSON bodies, and the one mapping of a refusal's code to
 * its HTTP status with the `{message, code}` error body.
 * @module
 */

import { type ErrorCode, ServiceError } from "../errors.ts";

/** The HTTP status of each error code (docs/interface.md §7). */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  invalid_body: 400,
  invalid_signature: 400,
  unsigned_not_permitted: 400,
  template_not_found: 400,
  policy_not_found: 400,
  invalid_evidence_extractor_url: 400,
  invalid_authorization: 400,
  invalid_webhook_url: 400,
  too_many_webhooks: 400,
  quorum_mismatch: 400,
  invalid_rule: 400,
  unauthorized: 401,
  signer_not_authorized: 403,
  rule_denied: 403,
  rule_error: 403,
  quorum_unreachable: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  intent_exists: 409,
  not_pending: 409,
  already_approved: 409,
  already_rejected: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_pending: 429,
  internal: 500,
  unavailable: 503,
};

/**
 * A refusal made at the HTTP edge that needs headers of its own
 * (`WWW-Authenticate`, `Allow`, `Connection: close`).
 */
export class HttpError extends ServiceError {
  override name = "HttpError";
  /**
   * @param code stable error code sent as `code`.
   * @param message human-readable, safe to send.
   * @param headers the response's extra headers.
   */
  constructor(code: ErrorCode, message: string, readonly headers: Record<string, string>) {
    super(code, message);
  }
}

/** Headers every API response carries. */
export const API_HEADERS: Readonly<Record<string, string>> = {
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
    headers: { ...API_HEADERS, "content-type": "application/json", ...headers },
  });
}

/** The response for a {@link ServiceError}: its code's status, and an {@link HttpError}'s headers. */
export function errorResponse(error: ServiceError): Response {
  const headers = error instanceof HttpError ? error.headers : {};
  return json(STATUS_OF[error.code], { message: error.message, code: error.code }, headers);
}
