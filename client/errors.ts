/**
 * The one error class of the client library.
 * @module
 */

/** An error answer of the service, with its stable `code`. */
export class IntentsError extends Error {
  /** Always `IntentsError`. */
  override name = "IntentsError";
  /**
   * An error answer, or a failure to get one.
   *
   * @param status the HTTP status (0 when the service could not be reached).
   * @param code the service's error code (e.g. `intent_exists`), or `network` (not reached) /
   *   `bad_response` (an answer the service should not give, e.g. an approvals view whose
   *   challenge does not match its signed object).
   */
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}
