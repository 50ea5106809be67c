/**
 * The store's {@link CommitLog}, through which every write goes
 * (docs/architecture.md, "Storage failures and readiness").
 * @module
 */

import {
  type CommitAttempt,
  STORAGE_FAILURE_TEXT,
  type StorageFailure,
  StorageUnavailableError,
} from "../domain/store.ts";
import { isLockedError, retryWhileLocked } from "./retry.ts";

/**
 * What Deno KV's SQLite backend throws (`TypeError`s, Deno 2.9) for each
 * storage failure, and SQLite's own wording ("attempt to write a readonly
 * database", "disk I/O error"); "database is locked" is `retry.ts`'s.
 */
const FAILURES: readonly [RegExp, StorageFailure][] = [
  [/database or disk is full/i, "full"],
  [/read-only database|readonly database/i, "read_only"],
  [/disk I\/O error/i, "io"],
];

/**
 * What kind of storage failure an error of a KV write is, or null when it is
 * not known to be one (those stay internal errors).
 *
 * @example
 * ```ts
 * storageFailureOf(new TypeError("database or disk is full")); // "full"
 * ```
 */
export function storageFailureOf(error: unknown): StorageFailure | null {
  if (!(error instanceof Error)) return null;
  if (isLockedError(error)) return "locked";
  for (const [pattern, failure] of FAILURES) {
    if (pattern.test(error.message)) return failure;
  }
  return null;
}

/** Runs the store's writes and remembers how the latest one went. */
export class CommitLog {
  readonly #now: () => Date;
  #last: CommitAttempt | null = null;

  /** @param now the clock that stamps each attempt. */
  constructor(now: () => Date) {
    this.#now = now;
  }

  /** The latest attempt, or null before the first. */
  last(): CommitAttempt | null {
    return this.#last;
  }

  /**
   * Runs one KV write, tried again while the file is locked, and records its
   * outcome: one that resolves succeeded, whatever its checks decided.
   *
   * @throws {StorageUnavailableError} when the storage cannot write, with the
   *   KV error as its `cause`; any other error of the write as it is.
   */
  async run<T>(write: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await retryWhileLocked(write);
    } catch (error) {
      const failure = storageFailureOf(error);
      this.#last = {
        at: this.#now(),
        ok: false,
        failure: failure ? STORAGE_FAILURE_TEXT[failure] : "unexpected error",
      };
      if (failure) throw new StorageUnavailableError(failure, { cause: error });
      throw error;
    }
    this.#last = { at: this.#now(), ok: true };
    return result;
  }
}
