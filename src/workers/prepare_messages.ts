/**
 * The messages between the prepare pool and its worker threads.
 * @module
 */

import type { ErrorCode } from "../errors.ts";
import type { Prepared } from "../domain/prepare.ts";
import type { PasskeyPolicy } from "../domain/passkey.ts";

/** The first message a worker gets: what verification needs besides the body. */
export interface InitMessage {
  type: "init";
  passkey: PasskeyPolicy;
}

/** Bodies to prepare, each under the pool's id for it. */
export interface BatchMessage {
  type: "batch";
  jobs: { id: number; bytes: Uint8Array }[];
}

/** What became of one body: prepared, refused (a client error), or a fault. */
export type Outcome =
  | { id: number; prepared: Prepared }
  | { id: number; refused: { code: ErrorCode; message: string } }
  | { id: number; fault: string };
