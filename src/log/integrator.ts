/**
 * The integrator: the tree extended as the feed grows, at most about a
 * second behind, by one process at a time, the holder of a short lease
 * (`["log", "integrator"]`, renewed by each of its steps and while it
 * waits), then a checkpoint signed for the state it reached. Any process
 * may hold it; one that dies leaves it to run out, and another takes over
 * from the stored state. The lease only saves duplicate work: every step is
 * checked against the state it read, and every checkpoint against the one
 * stored (`integrate.ts`, `checkpoints.ts`).
 * @module
 */

import { errorLine } from "../telemetry/error_line.ts";
import type { Store } from "../domain/store.ts";
import { spanTime, startSpan } from "../telemetry/tracing.ts";
import { delay } from "../timing.ts";
import type { CheckpointSigner } from "./checkpoints.ts";
import { integrateStep, type StepResult } from "./integrate.ts";
import { logKeys, type TreeState } from "./keys.ts";
import { EntryTap } from "./entry_tap.ts";
import { LogLease } from "./lease.ts";
import type { LogMetrics } from "./metrics.ts";

/** How long the lease lasts unless renewed. */
export const LEASE_MS = 3_000;
/** How often a process without the lease looks whether it is free, and a holder waits for events. */
export const LOOK_MS = 1_000;
/** While catching up, a checkpoint at least this often once one exists. */
const SIGN_EVERY_MS = 500;
/**
 * Caught up, the holder extends the tree again at most this often: each
 * pass rewrites the rightmost partial tiles and bundle and signs a
 * checkpoint, so passes of a few events each (as often as the feed moves,
 * every few ms under load) would cost far more per event than passes of
 * a quarter second's events. The bound of §14 (3 s after a 201) keeps room.
 */
export const PASS_EVERY_MS = 250;

/** What the integrator works with. */
export interface IntegratorOptions {
  kv: Deno.Kv;
  store: Pick<Store, "readEvents" | "waitForEvents" | "onOwnEvents">;
  signer: CheckpointSigner;
  /** Where failures are said, once each until it works again. */
  report: (line: string) => void;
  /** The lease's clock (Unix ms); default `Date.now`. */
  now?: () => number;
  /** Where the tree's size and lag are told. */
  metrics?: LogMetrics;
}

/** Extends the tree in the background while this process holds the lease. */
export class Integrator {
  readonly #kv: Deno.Kv;
  readonly #store: IntegratorOptions["store"];
  readonly #signer: CheckpointSigner;
  readonly #report: (line: string) => void;
  readonly #now: () => number;
  readonly #metrics: LogMetrics | undefined;
  readonly #lease: LogLease;
  readonly #stopping = new AbortController();
  #running: Promise<void> | undefined;
  #lastFailure = "";
  /** True once a checkpoint is stored (by anyone), so that catching up signs as it goes. */
  #checkpointed = false;
  #signedAt = 0;
  /** The entries of this process's moves, taken while it holds the lease. */
  readonly #tap = new EntryTap();
  #untap: (() => void) | undefined;

  constructor(options: IntegratorOptions) {
    this.#kv = options.kv;
    this.#store = options.store;
    this.#signer = options.signer;
    this.#report = options.report;
    this.#now = options.now ?? Date.now;
    this.#metrics = options.metrics;
    this.#lease = new LogLease({
      kv: options.kv,
      key: logKeys.integrator,
      ms: LEASE_MS,
      now: this.#now,
    });
  }

  /** Starts the background loop (once). */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Stops the loop (a step under way ends with its commit) and lets the lease go. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#running;
    await this.#lease.release().catch(() => {});
  }

  /**
   * Integrates until a step's read finds the feed's end (the tree covers the
   * feed as it stood then), then signs: one pass of what the lease holder
   * does (tests call it directly, as another process would).
   *
   * @returns the state reached.
   */
  async catchUp(): Promise<TreeState> {
    // A span for a pass that integrated something; an idle pass leaves none.
    const started = spanTime();
    let integrated = 0;
    let state: TreeState | undefined;
    try {
      state = await this.#catchUp((count) => integrated += count);
      return state;
    } finally {
      if (integrated > 0) {
        startSpan("intents.log.integrate", {
          root: true,
          startTime: started,
          attributes: {
            "intents.log.entries": integrated,
            ...(state ? { "intents.log.size": state.size } : {}),
          },
        })?.end();
      }
    }
  }

  async #catchUp(counted: (entries: number) => void): Promise<TreeState> {
    // A checkpoint stored before this process took the lease (its own before a restart, another
    // holder's): a long way behind (full steps only), the tree is signed as it grows, not only
    // once a read finds the feed's end.
    if (!this.#checkpointed) {
      this.#checkpointed = (await this.#kv.get(logKeys.checkpoint)).value !== null;
    }
    for (;;) {
      const step: StepResult = await integrateStep({
        kv: this.#kv,
        store: this.#store,
        recent: (after, limit) => this.#tap.entriesAfter(after, limit),
        also: this.#lease.write(),
      });
      if (step.outcome === "lost") continue;
      // The feed's end as of this step's read: the pass ends here, signed, even when more came
      // since (a load that never pauses, the first checkpoint of a new log included).
      const end = step.outcome === "caught_up" || step.end;
      this.#metrics?.integrated(step.state.size, end);
      if (step.outcome === "integrated") {
        counted(step.count);
        this.#lease.renewed();
      }
      if (end) {
        const { size, rootHash } = step.state;
        if (rootHash !== null) await this.#sign({ size, rootHash });
        return step.state;
      }
      if (this.#checkpointed && this.#now() - this.#signedAt >= SIGN_EVERY_MS) {
        await this.#sign(step.state);
      }
      if (this.#stopping.signal.aborted) return step.state;
    }
  }

  async #sign(state: { size: number; rootHash: Uint8Array }): Promise<void> {
    for (let tries = 0; tries < 3; tries++) {
      const outcome = await this.#signer.sign(state);
      if (outcome === "lost") continue;
      if (outcome !== "refused") this.#checkpointed = true;
      this.#signedAt = this.#now();
      return;
    }
  }

  /** Takes this process's moves into the tap, or stops and forgets them. */
  #tapped(on: boolean): void {
    if (on) {
      this.#untap ??= this.#store.onOwnEvents((events) => this.#tap.take(events));
      return;
    }
    this.#untap?.();
    this.#untap = undefined;
    this.#tap.clear();
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    try {
      await this.#loop(signal);
    } finally {
      this.#tapped(false);
    }
  }

  async #loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (!(await this.#lease.hold())) {
          this.#tapped(false);
          this.#metrics?.released();
          await delay(LOOK_MS, signal);
          continue;
        }
        this.#tapped(true);
        const passStarted = this.#now();
        const state = await this.catchUp();
        this.#lastFailure = "";
        if (signal.aborted) break;
        await this.#store.waitForEvents(state.size, { timeoutMs: LOOK_MS, signal });
        await delay(passStarted + PASS_EVERY_MS - this.#now(), signal);
      } catch (error) {
        const message = errorLine(error);
        if (message !== this.#lastFailure) {
          this.#lastFailure = message;
          this.#report(`intents: the log's integration failed (retrying): ${message}`);
        }
        await delay(LOOK_MS, signal);
      }
    }
  }
}
