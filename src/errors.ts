/**
 * The service's error vocabulary: every failure a client can see is a
 * {@link ServiceError} with an HTTP status and a stable machine-readable code.
 * @module
 */

/**
 * Every error code of the public interface (CONTRACT §7), in one list: the
 * type below is derived from it and the OpenAPI document enumerates it.
 */
export const ERROR_CODES = [
  "invalid_json",
  "invalid_body",
  "invalid_signature",
  "unsigned_not_permitted",
  "template_not_found",
  "policy_not_found",
  "intent_exists",
  "unsupported_media_type",
  "payload_too_large",
  "request_timeout",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "precondition_failed",
  "invalid_evidence_extractor_url",
  "unavailable",
  "internal",
  "invalid_authorization",
  "signer_not_authorized",
  "quorum_mismatch",
  "not_pending",
  "already_approved",
] as const;

/** A stable error code of the public interface. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * An error whose message is safe to show to the client.
 *
 * @example
 * ```ts
 * throw new ServiceError(400, "invalid_body", "payload.id: expected a string");
 * ```
 */
export class ServiceError extends Error {
  override name = "ServiceError";
  /**
   * @param status HTTP status code of the response.
   * @param code stable error code sent as `code`.
   * @param message human-readable, safe to send; never contains raw input.
   * @param headers extra response headers (e.g. `WWW-Authenticate`, `Allow`).
   */
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A 400 with the given code and message. */
export function badRequest(code: ErrorCode, message: string): ServiceError {
  return new ServiceError(400, code, message);
}
