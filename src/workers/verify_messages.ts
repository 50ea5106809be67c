/**
 * The messages between the verification pool and its worker threads.
 * @module
 */

import type { ErrorCode } from "../errors.ts";
import type { VerifiedSubmission } from "../domain/verify_submission.ts";
import type { PasskeyPolicy } from "../domain/passkey.ts";
import type { TraceParent } from "./verify_span.ts";

/** The first message a worker gets: what verification needs besides the body. */
export interface InitMessage {
  type: "init";
  passkey: PasskeyPolicy;
}

/** Bodies to verify, each under the pool's id for it, with its request's span when tracing. */
export interface BatchMessage {
  type: "batch";
  jobs: { id: number; bytes: Uint8Array; parent?: TraceParent }[];
}

/**
 * What became of one body: verified, refused (the client's error, with its
 * code and message), or a fault (not the client's: the pool verifies the
 * body again on its own thread and reports the fault).
 */
export type Outcome =
  | { id: number; verified: VerifiedSubmission }
  | { id: number; refused: { code: ErrorCode; message: string } }
  | { id: number; fault: string };
