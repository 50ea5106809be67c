/**
 * The load tool's `--log-coverage`: how long after its 201 each accepted
 * intent is covered by a served signed checkpoint (docs/interface.md §14:
 * within 3 s, p99). While the load runs, `GET /log/checkpoint` of every
 * instance is read every 50 ms (with the admin token; each process serves
 * its cached checkpoint, up to 1 s old, as any reader gets it), and each
 * larger tree size is noted with the time it was first read from any of
 * them. The feed's follower gives each intent's event position `p` (its
 * event id); the intent is covered at the first checkpoint of size `p` or
 * more, and its coverage time is that read's time minus its 201's (0 when
 * the checkpoint was read first).
 * @module
 */

import { type FeedFollower, followFeed } from "../../testing/feed_follower.ts";
import { summary } from "./figures.ts";

/** How often each instance's checkpoint is read. */
const POLL_MS = 50;

/** A server the coverage reads: its base URL and a token that may read the log and the feed. */
export interface CoverageTarget {
  url: string;
  token: string;
}

/** The coverage figures: milliseconds from 201 to a covering checkpoint, and what was missed. */
export interface CoverageFigures {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Intents accepted and covered: those measured. */
  measured: number;
  /** Intents accepted that no checkpoint read covered (or the feed did not show) in time. */
  not_covered: number;
  /** Checkpoint sizes read, each larger than the last. */
  checkpoints: number;
}

/** A running coverage measurement. */
export interface Coverage {
  /**
   * Resolves once a checkpoint is served (or `waitMs` passed, default 10 s):
   * the measured load starts on a log that has its first one.
   */
  ready(waitMs?: number): Promise<void>;
  /** Notes an answer: a 201 of intent `id` read at `at` (`performance.now()`). */
  answered(id: string, status: number, at: number): void;
  /**
   * After the load: waits up to `waitMs` (default 10 s) for every accepted
   * intent to be covered, stops reading, and gives the figures.
   */
  finish(waitMs?: number): Promise<CoverageFigures>;
}

/** Reads the served checkpoint's size: null while there is none (404, 503). */
async function servedSize(target: CoverageTarget, signal: AbortSignal): Promise<number | null> {
  const response = await fetch(`${target.url}/log/checkpoint`, {
    headers: { authorization: `Bearer ${target.token}` },
    signal,
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    return null;
  }
  return Number((await response.text()).split("\n")[1]);
}

/**
 * Starts reading the checkpoint of every target, and the feed of the first
 * (or through `follower`, already following it, which the caller stops).
 */
export function startCoverage(targets: CoverageTarget[], follower?: FeedFollower): Coverage {
  const feed = follower ?? followFeed(targets[0].url, targets[0].token);
  const accepted = new Map<string, number>();
  /** Larger and larger sizes, each with when it was first read. */
  const reads: { size: number; at: number }[] = [];
  const abort = new AbortController();
  const polls = targets.map(async (target) => {
    while (!abort.signal.aborted) {
      try {
        const size = await servedSize(target, abort.signal);
        const at = performance.now();
        if (size !== null && size > (reads.at(-1)?.size ?? 0)) reads.push({ size, at });
      } catch {
        // Aborted, or a read that failed: the next one comes.
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  });
  /** When a checkpoint of at least `position` entries was first read (undefined: not yet). */
  const coveredAt = (position: number) => {
    let [low, high] = [0, reads.length];
    while (low < high) {
      const mid = (low + high) >> 1;
      if (reads[mid].size >= position) high = mid;
      else low = mid + 1;
    }
    return reads[low]?.at;
  };
  const covered = (id: string) => {
    const position = feed.positions.get(id);
    return position !== undefined && coveredAt(position) !== undefined;
  };
  return {
    async ready(waitMs = 10_000) {
      const until = performance.now() + waitMs;
      while (reads.length === 0 && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    },
    answered(id, status, at) {
      if (status === 201) accepted.set(id, at);
    },
    async finish(waitMs = 10_000) {
      const until = performance.now() + waitMs;
      while (performance.now() < until && [...accepted.keys()].some((id) => !covered(id))) {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      abort.abort();
      await Promise.all(polls);
      if (follower === undefined) await feed.stop();
      const times: number[] = [];
      for (const [id, at] of accepted) {
        const position = feed.positions.get(id);
        const when = position === undefined ? undefined : coveredAt(position);
        if (when !== undefined) times.push(Math.max(0, when - at));
      }
      return {
        ...summary(new Float64Array(times).sort()),
        measured: times.length,
        not_covered: accepted.size - times.length,
        checkpoints: reads.length,
      };
    },
  };
}

/** The figures as a line for a terminal. */
export function coverageLine(f: CoverageFigures): string {
  return `log          covered p50 ${f.p50}  p95 ${f.p95}  p99 ${f.p99}  max ${f.max} ms after ` +
    `the 201 (${f.measured} intents, ${f.checkpoints} checkpoints); ${f.not_covered} not covered`;
}
