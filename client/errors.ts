/**
 * The error classes of the client library: {@link IntentsError} for an
 * answer of the service (or the lack of one), {@link LogVerificationError}
 * for a log whose checkpoints, proofs or tiles do not verify.
 * @module
 */

import type { CheckpointError } from "@intents/protocol/log/checkpoint_verify";
import type { TlogProofError } from "@intents/protocol/log/proof";

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

/**
 * Why the log failed a check: a checkpoint's or a proof's own error (see
 * `verifyCheckpoint` and `verifyTlogProof`), or
 * - `split_view`: two checkpoints signed by the log that cannot both be
 *   true (the same size with another root, or a larger tree that does not
 *   extend the trusted one);
 * - `tree_shrank`: a checkpoint smaller than one already trusted;
 * - `bad_tile`: a tile that is not what the checkpoint's tree holds;
 * - `audit_mismatch`: the entries recomputed from the feed do not make the
 *   checkpoint's root, or the feed lacks some of them;
 * - `bad_state`: a monitor's state file that cannot be read as its own.
 */
export type LogVerificationCode =
  | CheckpointError
  | TlogProofError
  | "split_view"
  | "tree_shrank"
  | "bad_tile"
  | "audit_mismatch"
  | "bad_state";

/**
 * The log did not verify: a bad signature, a proof that does not hold, or
 * a split view. Unlike an {@link IntentsError}, retrying does not mend it:
 * it is evidence against the log (or its copy), to be shown and kept.
 */
export class LogVerificationError extends Error {
  /** Always `LogVerificationError`. */
  override name = "LogVerificationError";
  /**
   * A check that failed.
   *
   * @param code what failed.
   * @param message what was seen.
   * @param evidence the signed checkpoints that contradict each other, for a split view.
   */
  constructor(
    readonly code: LogVerificationCode,
    message: string,
    readonly evidence?: { trusted: string; served: string },
  ) {
    super(message);
  }
}
