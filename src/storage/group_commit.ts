/**
 * Group commit: concurrent intent inserts share Deno KV atomic commits, with
 * every promise of one commit per insert kept (docs/architecture.md, "Group
 * commit"); at a batch of 1, one commit per insert, each started at once.
 * @module
 */

import type {
  BatchResult,
  InsertResult,
  IntentWriter,
  PendingIntent,
  Store,
} from "../domain/store.ts";

/** How a commit of a batch ended: a result per member, or the error that failed it whole. */
export type CommitOutcome = BatchResult[] | { error: unknown };

/**
 * Told of each insert's wait and of each commit, e.g. to trace them
 * (`src/storage/commit_spans.ts`). `W` is what it keeps for one wait.
 */
export interface CommitObserver<W = unknown> {
  /** An insert starts waiting, in its caller's context; what stands for its wait. */
  waiting(pending: PendingIntent): W;
  /** A commit of these waits starts; what to call with how it ended. */
  committing(waits: readonly W[]): (outcome: CommitOutcome) => void;
  /** A wait ended: its result, or the error that failed its commit. */
  answered(wait: W, outcome: InsertResult | { error: unknown }): void;
}

/** Options of {@link createGroupCommitWriter}. */
interface GroupCommitOptions {
  /** The most inserts one batch carries (at least 1). */
  batchMax: number;
  /** Asked as each batch starts: batches committing at once (default 1), inserts in each. */
  shape?: () => { inFlight: number; batchMax: number };
  /** Commits a batch of inserts with distinct ids: one result each, in order. */
  commit: (batch: readonly PendingIntent[]) => Promise<BatchResult[]>;
  /** Told of each wait and each commit (telemetry); none by default. */
  observer?: CommitObserver;
}

interface Waiter {
  pending: PendingIntent;
  /** What the observer keeps for this insert's wait. */
  wait: unknown;
  resolve: (result: InsertResult) => void;
  reject: (error: unknown) => void;
}

/** A batch taken from the queue: members with distinct ids, and later inserts of those ids. */
interface Batch {
  members: Waiter[];
  /** Index into `members` of the first insert of the same id, per duplicate. */
  duplicates: { waiter: Waiter; of: number }[];
}

/**
 * Builds a writer that groups concurrent inserts into shared commits.
 *
 * Within a batch, a later insert of an id already in it is not committed: it
 * waits for the first; when that one is created or already existed, it
 * answers "exists" (the first wins); otherwise it is queued again and tried on
 * its own.
 *
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 */
export function createGroupCommitWriter(options: GroupCommitOptions): IntentWriter {
  const { commit, observer } = options;
  if (!Number.isInteger(options.batchMax) || options.batchMax < 1) {
    throw new RangeError("batchMax must be a whole number of at least 1");
  }
  let queue: Waiter[] = [];
  let committing = 0;
  let scheduled = false;
  const shape = () => {
    const asked = options.shape?.() ?? { inFlight: 1, batchMax: options.batchMax };
    return {
      inFlight: Math.max(1, asked.inFlight),
      batchMax: Math.max(1, Math.min(options.batchMax, asked.batchMax)),
    };
  };

  /** Takes up to `batchMax` inserts of distinct ids from the queue, and their duplicates. */
  function takeBatch(batchMax: number): Batch {
    const members: Waiter[] = [];
    const duplicates: Batch["duplicates"] = [];
    const ids = new Map<string, number>();
    let taken = 0;
    for (; taken < queue.length; taken++) {
      const waiter = queue[taken];
      const first = ids.get(waiter.pending.intent.id);
      if (first !== undefined) {
        duplicates.push({ waiter, of: first });
        continue;
      }
      if (members.length === batchMax) break;
      ids.set(waiter.pending.intent.id, members.length);
      members.push(waiter);
    }
    queue = taken === queue.length ? [] : queue.slice(taken);
    return { members, duplicates };
  }

  /** Commits a batch; its results, or the error that failed the whole commit. */
  async function commitBatch({ members }: Batch): Promise<CommitOutcome> {
    const ended = observer?.committing(members.map((m) => m.wait));
    let outcome: CommitOutcome;
    try {
      const results = await commit(members.map((m) => m.pending));
      if (results.length !== members.length) {
        throw new Error(`commit returned ${results.length} results for ${members.length}`);
      }
      outcome = results;
    } catch (error) {
      outcome = { error };
    }
    ended?.(outcome);
    return outcome;
  }

  /** Answers one waiter with its result, or the error of the commit that carried it. */
  function answerOne(waiter: Waiter, result: BatchResult): void {
    if (result.outcome === "failed") {
      observer?.answered(waiter.wait, { error: result.error });
      waiter.reject(result.error);
    } else {
      observer?.answered(waiter.wait, result);
      waiter.resolve(result);
    }
  }

  /**
   * Puts back at the head of the queue, in arrival order, the later inserts
   * of an id whose first insert did not take it; answers the others "exists".
   */
  function requeueDuplicates({ duplicates }: Batch, outcome: CommitOutcome): void {
    const retry: Waiter[] = [];
    for (const { waiter, of } of duplicates) {
      const first = Array.isArray(outcome) ? outcome[of].outcome : undefined;
      if (first === "created" || first === "exists") answerOne(waiter, { outcome: "exists" });
      else retry.push(waiter);
    }
    if (retry.length > 0) queue = retry.concat(queue);
  }

  /** Answers the members of a committed batch. */
  function answer({ members }: Batch, outcome: CommitOutcome): void {
    if (Array.isArray(outcome)) {
      for (let i = 0; i < members.length; i++) answerOne(members[i], outcome[i]);
    } else {
      for (const m of members) {
        observer?.answered(m.wait, outcome);
        m.reject(outcome.error);
      }
    }
  }

  /**
   * Starts batches while inserts wait and fewer than `inFlight` commit: a
   * batch that is not full starts only when none is committing, so that
   * under load inserts gather into full batches.
   */
  function pump(): void {
    for (;;) {
      const { inFlight, batchMax } = shape();
      if (queue.length === 0 || committing >= inFlight) return;
      if (committing > 0 && queue.length < batchMax) return;
      void start(takeBatch(batchMax));
    }
  }

  /**
   * Commits one batch. When it ends, the next batch starts before its
   * members are answered: answering runs their requests on (rendering,
   * responding), and the commit should not wait for that.
   */
  async function start(batch: Batch): Promise<void> {
    committing++;
    const outcome = await commitBatch(batch);
    committing--;
    requeueDuplicates(batch, outcome);
    pump();
    answer(batch, outcome);
  }

  return {
    insert(pending: PendingIntent): Promise<InsertResult> {
      const wait = observer?.waiting(pending);
      return new Promise<InsertResult>((resolve, reject) => {
        queue.push({ pending, wait, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          // A microtask, not a timer: inserts made in the same turn join the
          // first commit, and a lone insert is not delayed.
          queueMicrotask(() => {
            scheduled = false;
            pump();
          });
        }
      });
    },
  };
}

/** What {@link createWriter} needs of the store: inserts, and how its commits are best fed. */
export type WriterStore = Pick<Store, "insertIntents"> & {
  /** The most inserts one commit carries, and the most commits at once (`KvStore.commitShape`). */
  commitShape?: (batchMax: number) => { inFlight: number; batchMax: number };
};

/**
 * Builds the writer for the settings: {@link createGroupCommitWriter} over
 * the store's inserts, shaped as the store says.
 *
 * @param options.batchMax the most inserts in commits at once
 *   (`COMMIT_BATCH_MAX`); 1 means one commit per insert, as many at once as
 *   inserts come.
 * @param options.observer told of each wait and commit (telemetry); none by default.
 * @throws {RangeError} when `batchMax` is not a whole number of at least 1.
 * @example
 * ```ts
 * import { KvStore } from "./kv_store.ts";
 *
 * const kv = await Deno.openKv(":memory:");
 * const writer = createWriter(new KvStore(kv), { batchMax: 32 });
 * // `writer.insert({ intent, ref })` from concurrent requests: they share commits.
 * kv.close();
 * ```
 */
export function createWriter(
  store: WriterStore,
  options: { batchMax: number; observer?: CommitObserver },
): IntentWriter {
  const { batchMax, observer } = options;
  const commitShape = store.commitShape;
  const shape = batchMax === 1
    ? () => ({ inFlight: Infinity, batchMax: 1 })
    : commitShape && (() => commitShape.call(store, batchMax));
  return createGroupCommitWriter({
    batchMax,
    observer,
    shape,
    commit: (b) => store.insertIntents(b),
  });
}
