/**
 * The messages between the verification pool and its worker threads: `work`
 * (bodies to read, and `go` or `drop` for bodies read before), answered by one
 * {@link Outcome} per body (docs/architecture.md: Verification workers).
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
