/**
 * Where submission bodies are read and verified: on the serving thread, or on
 * a pool of `VERIFY_WORKERS` worker threads (docs/architecture.md:
 * Verification workers). A body is read first (`read`); the caller decides on
 * its summary (the work, the document) before its signature is verified
 * (`ReadBody.verify`) or dropped. Bodies go to a worker in batches, one
 * message per worker per turn of the event loop. Reading and verifying are
 * pure, so a worker that fails (it could not start, its thread died, or it
 * held bodies without answering for `stallMs`) costs only time: what it held
 * is answered on the calling thread, and one that had been answering is
 * replaced.
 * @module
 */

import { setImmediate } from "node:timers";
import { ServiceError } from "../errors.ts";
import {
  readSubmissionBody,
  type SubmissionSummary,
  type VerifiedSubmission,
  verifyRead,
} from "../domain/verify_submission.ts";
import type { VerifyContext } from "../domain/authorship.ts";
import type { InitMessage, Outcome, WorkMessage } from "./verify_messages.ts";
import { activeSpan } from "../telemetry/tracing.ts";
import { type TraceParent, traceParentOf, verifyInSpan } from "./verify_span.ts";

/** A body read and held for its verification: what the cheap refusals decide on comes first. */
export interface ReadBody {
  /** The work it asks for, the template or policy it names, whether it is signed. */
  readonly summary: SubmissionSummary;
  /**
   * Verifies its authorship (once; a second call gets the same answer).
   *
   * @throws {ServiceError} as `verifyRead`.
   */
  verify(): Promise<VerifiedSubmission>;
  /** Forgets it unverified: a refusal came first. */
  drop(): void;
}

/** Reads and verifies `POST /intents` bodies. */
export interface Verifier {
  /** Worker threads doing the work now; 0 when it runs on the calling thread. */
  readonly threads: number;
  /**
   * Reads `bytes`: the strict parse, the shape and encodings, the work asked for.
   *
   * @throws {ServiceError} as `readSubmissionBody`; or as `verifyRead` when a
   *   worker verified it at once (then no refusal of the caller's was possible).
   */
  read(bytes: Uint8Array): Promise<ReadBody>;
  /** Stops the workers; what they still hold is verified on the calling thread. */
  close(): void;
}

/** A body read on the calling thread. */
function readHere(ctx: VerifyContext, bytes: Uint8Array, parent?: TraceParent): ReadBody {
  const read = readSubmissionBody(ctx, bytes);
  let verified: Promise<VerifiedSubmission> | undefined;
  return {
    summary: read.summary,
    verify: () =>
      verified ??= verifyInSpan(() => verifyRead(ctx, read), { parent, thread: "serving" }),
    drop() {},
  };
}

/** A body verified already: nothing is left to do but answer. */
function verifiedBody(summary: SubmissionSummary, verified: VerifiedSubmission): ReadBody {
  return { summary, verify: () => Promise.resolve(verified), drop() {} };
}

/**
 * Reads and verifies on the calling thread.
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
 * const refusal = await verifier.read(new TextEncoder().encode("[")).catch((e) => e);
 * refusal.code; // "invalid_json"
 * ```
 */
export function inlineVerifier(ctx: VerifyContext): Verifier {
  return {
    threads: 0,
    read: (bytes) => Promise.resolve().then(() => readHere(ctx, bytes)),
    close() {},
  };
}

interface Job {
  bytes: Uint8Array;
  /** The request's span, when tracing: the worker's span of this body is its child. */
  parent: TraceParent | undefined;
  /** Answered when read: its summary, or a refusal. */
  read: PromiseWithResolvers<ReadBody>;
  /** Present once the caller asked for its verification. */
  verified?: PromiseWithResolvers<VerifiedSubmission>;
}

/** One worker, what it was sent and has not answered, and what waits to be sent. */
interface Slot {
  worker: Worker;
  /** Held by the worker: being read, or verified. */
  sent: Map<number, Job>;
  queue: Map<number, Job>;
  /** Decisions to send: bodies to verify, bodies to forget. */
  go: number[];
  drop: number[];
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
  /** How long a worker may hold bodies without answering before it is stopped; default 5000 ms. */
  stallMs?: number;
  /** Told of a worker's fault (no refusal of the body's); default: a line on stderr. */
  onFault?: (fault: string) => void;
  /** Whether the gate charges work above one token (the address limit is on); default true. */
  workCharged?: boolean;
}

/** A pool of worker threads verifying bodies, each answering in batches. */
export class VerifyPool implements Verifier {
  readonly #ctx: VerifyContext;
  readonly #workerUrl: URL;
  readonly #stallMs: number;
  readonly #onFault: (fault: string) => void;
  readonly #workCharged: boolean;
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
    this.#workCharged = options.workCharged ?? true;
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

  read(bytes: Uint8Array): Promise<ReadBody> {
    const parent = traceParentOf(activeSpan());
    const slot = this.#leastBusy();
    if (slot === undefined) return Promise.resolve().then(() => readHere(this.#ctx, bytes, parent));
    const job: Job = { bytes, parent, read: Promise.withResolvers() };
    slot.queue.set(this.#nextId++, job);
    this.#schedule(slot);
    return job.read.promise;
  }

  /** After this turn's I/O: every body read in it, and every decision, goes in one message. */
  #schedule(slot: Slot): void {
    if (slot.flushing) return;
    slot.flushing = true;
    setImmediate(() => this.#flush(slot));
  }

  /** Answers a job on the calling thread, from where it stands. */
  #inline(job: Job): void {
    const here = Promise.resolve().then(() => readHere(this.#ctx, job.bytes, job.parent));
    if (job.verified === undefined) here.then(job.read.resolve, job.read.reject);
    else here.then((body) => body.verify()).then(job.verified.resolve, job.verified.reject);
  }

  /** A body a worker read and holds: verified there, or forgotten, as the caller decides. */
  #held(slot: Slot, id: number, job: Job, summary: SubmissionSummary): ReadBody {
    return {
      summary,
      verify: () => {
        if (job.verified) return job.verified.promise;
        job.verified = Promise.withResolvers();
        if (!this.#slots.includes(slot)) this.#inline(job);
        else {
          if (slot.sent.size === 0) slot.progressAt = performance.now();
          slot.sent.set(id, job);
          slot.go.push(id);
          this.#schedule(slot);
        }
        return job.verified.promise;
      },
      drop: () => {
        if (job.verified || !this.#slots.includes(slot)) return;
        slot.drop.push(id);
        this.#schedule(slot);
      },
    };
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
      go: [],
      drop: [],
      flushing: false,
      answered: false,
      progressAt: performance.now(),
    };
    const { passkey } = this.#ctx;
    worker.postMessage(
      { type: "init", passkey, workCharged: this.#workCharged } satisfies InitMessage,
    );
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

  /** Stops a worker; what it held is answered on the calling thread. */
  #retire(slot: Slot): void {
    clearInterval(slot.watch);
    slot.worker.terminate();
    for (const jobs of [slot.sent, slot.queue]) {
      for (const job of jobs.values()) this.#inline(job);
      jobs.clear();
    }
    slot.go = [];
    slot.drop = [];
  }

  #leastBusy(): Slot | undefined {
    const load = (slot: Slot) => slot.sent.size + slot.queue.size;
    let best: Slot | undefined;
    for (const slot of this.#slots) if (best === undefined || load(slot) < load(best)) best = slot;
    return best;
  }

  #flush(slot: Slot): void {
    slot.flushing = false;
    if (!this.#slots.includes(slot)) return;
    if (slot.queue.size === 0 && slot.go.length === 0 && slot.drop.length === 0) return;
    if (slot.sent.size === 0) slot.progressAt = performance.now();
    if (slot.sent.size > 0 || slot.queue.size > 0) {
      slot.watch ??= setInterval(() => this.#check(slot), this.#stallMs / 2);
    }
    const jobs: WorkMessage["jobs"] = [];
    for (const [id, job] of slot.queue) {
      jobs.push(
        job.parent ? { id, bytes: job.bytes, parent: job.parent } : { id, bytes: job.bytes },
      );
      slot.sent.set(id, job);
    }
    slot.queue.clear();
    const message: WorkMessage = { type: "work", jobs, go: slot.go, drop: slot.drop };
    slot.go = [];
    slot.drop = [];
    slot.worker.postMessage(message);
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
      const answer = job.verified ?? job.read;
      if ("read" in outcome) job.read.resolve(this.#held(slot, outcome.id, job, outcome.read));
      else if ("verified" in outcome) {
        const { verified, summary } = outcome;
        // Verified at once (no refusal of the caller's was possible): its read comes with it.
        if (summary !== undefined) job.read.resolve(verifiedBody(summary, verified));
        else job.verified?.resolve(verified);
      } else if ("refused" in outcome) {
        const { code, message } = outcome.refused;
        answer.reject(new ServiceError(code, message));
      } else {
        // Not the request's fault: the calling thread answers as it would have.
        this.#onFault(outcome.fault);
        this.#inline(job);
      }
    }
  }
}
