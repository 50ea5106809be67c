/**
 * Every KV write of the store goes through one {@link CommitLog}: it tries a
 * locked write again, turns the storage's own failures into the port's
 * {@link StorageUnavailableError}, and remembers the outcome of the latest
 * attempt, which readiness reports without touching the storage.
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
 * The messages Deno KV's SQLite backend throws (as `TypeError`s) for each
 * storage failure, as observed on Deno 2.9: a full disk gives "database or
 * disk is full" (SQLITE_FULL); a file the process may only read gives "Can
 * not write to a read-only database."; a lock held by another process past
 * SQLite's wait gives "database is locked" (see `retry.ts`). SQLite's own
 * wording for a read-only file, "attempt to write a readonly database", and
 * for a failing disk, "disk I/O error", are matched too.
 */
const FAILURES: readonly [RegExp, StorageFailure][] = [
  [/database or disk is full/i, "full"],
  [/read-only database|readonly database/i, "read_only"],
  [/disk I\/O error/i, "io"],
];

/**
 * What kind of storage failure an error of a KV write is, or null when it is
 * not known to be one (a bug, a closed handle, a network error of a remote
 * KV): those stay internal errors.
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
   * Runs one KV write (a commit or a set), trying it again while the file is
   * locked, and records its outcome. A write that resolves counts as a
   * success whatever its checks decided: the storage answered.
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
