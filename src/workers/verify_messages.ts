/**
 * The messages between the verification pool and its worker threads.
 *
 * A body goes to a worker in a `work` message; the worker reads it and
 * answers `read` with what the serving thread decides on (the work it costs,
 * the template or policy it names), keeping what it read. The serving thread
 * charges that work and finds the document, then answers `go` (verify it) or
 * `drop` (refused: forget it) in a later `work` message; the worker answers
 * `verified` or `refused`. A worker that knows the document exists (it was
 * told `go` for a body under it before: documents are never removed) and
 * need not wait for a charge (the work is 1, or nothing is charged) verifies
 * at once and answers `verified` with the summary, which the serving thread
 * then passes through its gate, which cannot refuse it for a reason that
 * verifying first would hide.
 * @module
 */

import type { ErrorCode } from "../errors.ts";
import type { SubmissionSummary, VerifiedSubmission } from "../domain/verify_submission.ts";
import type { PasskeyPolicy } from "../domain/passkey.ts";
import type { TraceParent } from "./verify_span.ts";

/** The first message a worker gets: what verification needs besides the body. */
export interface InitMessage {
  type: "init";
  passkey: PasskeyPolicy;
  /** Whether a body's work above one token is charged (the address limit is on). */
  workCharged: boolean;
}

/** Bodies to read, and decisions on bodies read before, each under the pool's id for it. */
export interface WorkMessage {
  type: "work";
  /** Each with its request's span when tracing: the worker's span of it is the child. */
  jobs: { id: number; bytes: Uint8Array; parent?: TraceParent }[];
  /** Bodies read before whose gate passed: verify them. */
  go: number[];
  /** Bodies read before whose gate refused them: forget them. */
  drop: number[];
}

/**
 * What became of one body: read and held for the serving thread's decision;
 * verified (with its summary when the gate has not seen it yet); refused
 * (the client's error, with its code and message); or a fault (not the
 * client's: the pool answers the body on its own thread and reports it).
 */
export type Outcome =
  | { id: number; read: SubmissionSummary }
  | { id: number; verified: VerifiedSubmission; summary?: SubmissionSummary }
  | { id: number; refused: { code: ErrorCode; message: string } }
  | { id: number; fault: string };
