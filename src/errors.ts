/**
 * The service's error vocabulary: every failure a client can see is a
 * {@link ServiceError} with a stable machine-readable code.
 * @module
 */

/**
 * Every error code of the public interface (docs/interface.md §7), in one list: the
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
  "already_rejected",
  "invalid_webhook_url",
  "too_many_webhooks",
  "rate_limited",
  "too_many_pending",
  "invalid_rule",
  "rule_denied",
  "rule_error",
  "quorum_unreachable",
] as const;

/** A stable error code of the public interface. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A refusal whose message is safe to show to the client: a stable code and
 * a message. It says nothing of HTTP; the edge maps each code to its status
 * (`src/http/respond.ts`).
 *
 * @example
 * ```ts
 * const refusal = new ServiceError("invalid_body", "payload.id: expected a string");
 * refusal.code; // "invalid_body": the edge answers it with 400
 * ```
 */
export class ServiceError extends Error {
  override name = "ServiceError";
  /**
   * @param code stable error code sent as `code`.
   * @param message human-readable, safe to send; never contains raw input.
   */
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
  }
}

/**
 * The refusal of a body over `limit` bytes: as received, or as the record
 * would store it (every number written as JCS writes it).
 *
 * @example
 * ```ts
 * const refusal = tooLarge(32_768);
 * refusal.message; // "request body is larger than 32768 bytes"
 * ```
 */
export function tooLarge(limit: number, options: { asStored?: boolean } = {}): ServiceError {
  return new ServiceError(
    "payload_too_large",
    options.asStored
      ? `body: as stored, with its numbers written in full, it is over ${limit} bytes`
      : `request body is larger than ${limit} bytes`,
  );
}

/** Thrown for a malformed setting; the message is one line naming the variable. */
export class SettingsError extends Error {
  override name = "SettingsError";
}
