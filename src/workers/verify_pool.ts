/**
 * Where submission bodies are parsed and verified (`verifySubmissionBody`):
 * on the thread that serves HTTP, or on a pool of `VERIFY_WORKERS` worker
 * threads so that thread only reads, stores and answers. Parsing and
 * verifying are a large part of a submission's CPU; with workers beside it,
 * the serving thread does the rest.
 *
 * Bodies go to a worker in batches, one message per worker per turn of the
 * event loop, and come back one message per batch: a message costs the
 * serving thread far more than a body's share of a batch does.
 *
 * Verifying is a pure function of the bytes and the passkey policy, so a
 * worker that fails (it could not start, its thread died, or it held bodies
 * without answering for `stallMs`) costs nothing but time: what it held is
 * verified on the calling thread, and a worker that had been answering is
 * replaced.
 * @module
 */

import { setImmediate } from "node:timers";
import { ServiceError } from "../errors.ts";
import type { VerifiedSubmission } from "../domain/verify_submission.ts";
import type { VerifyContext } from "../domain/authorship.ts";
import { activeSpan } from "../telemetry/tracing.ts";
import type { BatchMessage, InitMessage, Outcome } from "./verify_messages.ts";
import { type TraceParent, traceParentOf, verifyInSpan } from "./verify_span.ts";

/** Parses and verifies `POST /intents` bodies. */
export interface Verifier {
  /** Worker threads doing the work now; 0 when it runs on the calling thread. */
  readonly threads: number;
  /** @throws {ServiceError} as `verifySubmissionBody`. */
  verify(bytes: Uint8Array): Promise<VerifiedSubmission>;
  /** Stops the workers; what they still hold is verified on the calling thread. */
  close(): void;
}

/**
 * Verifies on the calling thread.
 *
 * @example
 * ```ts
 * import { verifyContext } from "../domain/authorship.ts";
 *
 * const verifier = inlineVerifier(verifyContext({
 *   rpIds: ["localhost"],
 *   origins: ["http://localhost:8000"],
 *   requireUserVerification: false,
 * }));
 * const refusal = await verifier.verify(new TextEncoder().encode("[")).catch((e) => e);
 * refusal.code; // "invalid_json"
 * ```
 */
export function inlineVerifier(ctx: VerifyContext): Verifier {
  return {
    threads: 0,
    verify: (bytes) => verifyInSpan(ctx, bytes, { thread: "serving" }),
    close() {},
  };
}

interface Job {
  bytes: Uint8Array;
  /** The request's span, when tracing: the worker's span of this body is its child. */
  parent: TraceParent | undefined;
  resolve: (verified: VerifiedSubmission) => void;
  reject: (error: unknown) => void;
}

/** One worker, what it was sent and has not answered, and what waits to be sent. */
interface Slot {
  worker: Worker;
  sent: Map<number, Job>;
  queue: Map<number, Job>;
  flushing: boolean;
  /** Whether it has answered a batch: a worker that never did is not started again. */
  answered: boolean;
  /** When it last answered, or was sent bodies while holding none. */
  progressAt: number;
  /** Checks, while it holds bodies, that it answers. */
  watch?: ReturnType<typeof setInterval>;
}

const WORKER_URL = new URL("./verify_worker.ts", import.meta.url);

/** Options of {@link VerifyPool}. */
export interface VerifyPoolOptions {
  /** The workers' module; default `verify_worker.ts` beside this one. */
  workerUrl?: URL;
  /**
   * How long a worker may hold bodies without answering any before it is
   * stopped and they are verified on the calling thread; default 5000 ms
   * (a batch takes milliseconds).
   */
  stallMs?: number;
  /**
   * Told of a worker's fault (an error that is no refusal of the body), after
   * which the body is verified on the calling thread; default: a line on stderr.
   */
  onFault?: (fault: string) => void;
}

/** A pool of worker threads verifying bodies, each answering in batches. */
export class VerifyPool implements Verifier {
  readonly #ctx: VerifyContext;
  readonly #workerUrl: URL;
  readonly #stallMs: number;
  readonly #onFault: (fault: string) => void;
  #slots: Slot[] = [];
  #nextId = 0;
  #closed = false;

  /**
   * @param threads how many workers (at least 1).
   * @param ctx the calling thread's verify context: its passkey policy is
   *   sent to each worker once (a worker builds caches of its own), and it
   *   verifies what the workers cannot.
   * @param options see {@link VerifyPoolOptions}.
   * @throws {RangeError} for fewer than one thread; whatever `new Worker` throws
   *   where this runtime has no workers.
   */
  constructor(threads: number, ctx: VerifyContext, options: VerifyPoolOptions = {}) {
    if (!Number.isInteger(threads) || threads < 1) {
      throw new RangeError("threads must be a whole number from 1");
    }
    this.#ctx = ctx;
    this.#workerUrl = options.workerUrl ?? WORKER_URL;
    this.#stallMs = options.stallMs ?? 5000;
    this.#onFault = options.onFault ??
      ((fault) => console.error(`intents: a verify worker failed on a body (${fault})`));
    try {
      for (let i = 0; i < threads; i++) this.#slots.push(this.#start());
    } catch (error) {
      this.close();
      throw error;
    }
  }

  get threads(): number {
    return this.#slots.length;
  }

  verify(bytes: Uint8Array): Promise<VerifiedSubmission> {
    const slot = this.#leastBusy();
    if (slot === undefined) return verifyInSpan(this.#ctx, bytes, { thread: "serving" });
    const parent = traceParentOf(activeSpan());
    return new Promise((resolve, reject) => {
      slot.queue.set(this.#nextId++, { bytes, parent, resolve, reject });
      if (!slot.flushing) {
        slot.flushing = true;
        // After this turn's I/O: every body read in it goes in one message.
        setImmediate(() => this.#flush(slot));
      }
    });
  }

  close(): void {
    this.#closed = true;
    const slots = this.#slots;
    this.#slots = [];
    for (const slot of slots) this.#retire(slot);
  }

  #start(): Slot {
    const worker = new Worker(this.#workerUrl, { type: "module", name: "verify" });
    const slot: Slot = {
      worker,
      sent: new Map(),
      queue: new Map(),
      flushing: false,
      answered: false,
      progressAt: performance.now(),
    };
    worker.postMessage({ type: "init", passkey: this.#ctx.passkey } satisfies InitMessage);
    worker.onmessage = (event: MessageEvent<Outcome[]>) => this.#settle(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#failed(slot);
    };
    worker.onmessageerror = () => this.#failed(slot);
    return slot;
  }

  /** A worker failed: it goes, and one that had been answering is replaced. */
  #failed(slot: Slot): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    this.#retire(slot);
    if (slot.answered && !this.#closed) {
      try {
        this.#slots.push(this.#start());
      } catch {
        // No worker can start now: the calling thread verifies from here on.
      }
    }
  }

  /** Stops a worker; what it held is verified on the calling thread. */
  #retire(slot: Slot): void {
    clearInterval(slot.watch);
    slot.worker.terminate();
    for (const jobs of [slot.sent, slot.queue]) {
      for (const job of jobs.values()) this.#verifyHere(job);
      jobs.clear();
    }
  }

  #leastBusy(): Slot | undefined {
    let best: Slot | undefined;
    for (const slot of this.#slots) {
      if (
        best === undefined || slot.sent.size + slot.queue.size < best.sent.size + best.queue.size
      ) {
        best = slot;
      }
    }
    return best;
  }

  #flush(slot: Slot): void {
    slot.flushing = false;
    if (slot.queue.size === 0 || !this.#slots.includes(slot)) return;
    if (slot.sent.size === 0) slot.progressAt = performance.now();
    slot.watch ??= setInterval(() => this.#check(slot), this.#stallMs / 2);
    const jobs: BatchMessage["jobs"] = [];
    for (const [id, job] of slot.queue) {
      jobs.push(
        job.parent ? { id, bytes: job.bytes, parent: job.parent } : { id, bytes: job.bytes },
      );
      slot.sent.set(id, job);
    }
    slot.queue.clear();
    slot.worker.postMessage({ type: "batch", jobs } satisfies BatchMessage);
  }

  /** Stops watching a worker that holds nothing; fails one that stopped answering. */
  #check(slot: Slot): void {
    if (slot.sent.size === 0) {
      clearInterval(slot.watch);
      slot.watch = undefined;
    } else if (performance.now() - slot.progressAt >= this.#stallMs) {
      this.#failed(slot);
    }
  }

  #settle(slot: Slot, outcomes: Outcome[]): void {
    slot.answered = true;
    slot.progressAt = performance.now();
    for (const outcome of outcomes) {
      const job = slot.sent.get(outcome.id);
      if (job === undefined) continue;
      slot.sent.delete(outcome.id);
      if ("verified" in outcome) job.resolve(outcome.verified);
      else if ("refused" in outcome) {
        const { code, message } = outcome.refused;
        job.reject(new ServiceError(code, message));
      } else {
        // Not the request's fault: the calling thread answers as it would have.
        this.#onFault(outcome.fault);
        this.#verifyHere(job);
      }
    }
  }

  /** Verifies a job on the calling thread (what a worker could not). */
  #verifyHere(job: Job): void {
    verifyInSpan(this.#ctx, job.bytes, { parent: job.parent, thread: "serving" })
      .then(job.resolve, job.reject);
  }
}
