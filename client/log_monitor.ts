/**
 * A monitor of the verifiable log (docs/interface.md §14, "Clients"): it
 * follows the served checkpoint, checks each against the log's key and the
 * witness policy and against the last checkpoint it trusted (a consistency
 * proof from the tiles), and keeps that last checkpoint, as its signed note,
 * in a state file. Anything inconsistent (a bad signature, a tree that
 * shrank, two roots for one size, a tree that does not extend the trusted
 * one) throws a {@link LogVerificationError}, and the state file is left as
 * it was: the evidence stays.
 *
 * The state file is read and written with Deno's file calls.
 *
 * @example
 * ```ts
 * import { IntentsClient, Monitor } from "./mod.ts";
 *
 * async function watchLog(logKey: string, signal: AbortSignal): Promise<void> {
 *   const client = new IntentsClient({ url: "http://localhost:8000", token: "events-token" });
 *   const monitor = new Monitor({ log: client.log, logKey, stateFile: "log-state.json" });
 *   await monitor.watch({ intervalMs: 10_000, signal, onRound: (r) => console.log(r.size) });
 * }
 * ```
 * @module
 */

import type { Checkpoint } from "@intents/protocol/log/checkpoint";
import type { CheckpointPolicy, Cosigned } from "@intents/protocol/log/checkpoint_verify";
import { IntentsError, LogVerificationError } from "./errors.ts";
import { checkCheckpoint, type LogApi, type VerifiedCheckpoint } from "./log.ts";
import { pause } from "./pause.ts";

/** What a {@link Monitor} is given. */
export interface MonitorOptions extends CheckpointPolicy {
  /** The log's calls (`client.log`), with a token where the checkpoint and tiles need one. */
  log: LogApi;
  /** Where the last trusted checkpoint is kept (JSON, written whole each time it changes). */
  stateFile: string;
  /** Now, in milliseconds since the epoch (default `Date.now`): cosignatures from the future do not count. */
  now?: () => number;
}

/** What one round of a {@link Monitor} found. */
export interface MonitorRound {
  /** `first`: nothing trusted before (trusted now); `same`: unchanged; `grown`: proved to extend it. */
  change: "first" | "same" | "grown";
  /** The size trusted before this round (null on the first). */
  previousSize: number | null;
  /** The tree size now trusted. */
  size: number;
  /** The checkpoint now trusted. */
  checkpoint: Checkpoint;
  /** The witnesses' cosignatures that counted. */
  cosigned: Cosigned[];
}

/** The state file's form. */
interface StateFile {
  /** The last trusted checkpoint's signed note. */
  checkpoint: string;
}

/** Follows the log's checkpoint and fails loudly on anything inconsistent. */
export class Monitor {
  readonly #options: MonitorOptions;

  /** A monitor of one log; its policy's keys are read on its first round. */
  constructor(options: MonitorOptions) {
    this.#options = options;
  }

  #policy(): CheckpointPolicy {
    const { log: _log, stateFile: _file, now = Date.now, ...policy } = this.#options;
    return { ...policy, nowS: Math.floor(now() / 1000) };
  }

  /**
   * The last trusted checkpoint, from the state file; null when there is none.
   *
   * @throws {LogVerificationError} `bad_state` when the file is not a
   *   checkpoint of this log signed by its key.
   */
  async trusted(): Promise<VerifiedCheckpoint | null> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.#options.stateFile);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    }
    const bad = (why: string) =>
      new LogVerificationError("bad_state", `${this.#options.stateFile}: ${why}`);
    let state: Partial<StateFile>;
    try {
      state = JSON.parse(text);
    } catch {
      throw bad("not JSON");
    }
    if (typeof state?.checkpoint !== "string") throw bad("no checkpoint member");
    // The witnesses may have changed since: the log's own signature is what binds the state.
    const { logKey, origin } = this.#options;
    try {
      return checkCheckpoint(state.checkpoint, { logKey, origin });
    } catch (error) {
      if (error instanceof LogVerificationError) throw bad(error.message);
      throw error;
    }
  }

  async #keep(trusted: VerifiedCheckpoint): Promise<void> {
    const file = this.#options.stateFile;
    const state: StateFile = { checkpoint: trusted.note };
    // Written aside then renamed, so that a crash leaves the old state or the new, whole.
    await Deno.writeTextFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
    await Deno.rename(`${file}.tmp`, file);
  }

  /**
   * One round: fetches the checkpoint, checks it against the policy and the
   * last trusted one (proving consistency from the tiles when it grew), and
   * keeps it as the trusted one.
   *
   * @throws {LogVerificationError} on anything inconsistent; the state file is unchanged.
   * @throws {IntentsError} when the service cannot be read (retry later).
   */
  async check(signal?: AbortSignal): Promise<MonitorRound> {
    const { log } = this.#options;
    const trusted = await this.trusted();
    const served = await log.checkpoint(this.#policy(), signal);
    if (trusted !== null) await log.consistency(trusted, served, signal);
    const previousSize = trusted?.checkpoint.size ?? null;
    const { checkpoint, cosigned } = served;
    const change = previousSize === null
      ? "first"
      : previousSize === checkpoint.size
      ? "same"
      : "grown";
    if (change !== "same") await this.#keep(served);
    return { change, previousSize, size: checkpoint.size, checkpoint, cosigned };
  }

  /**
   * Rounds every `intervalMs` until `signal` aborts (then it returns).
   * A round the service could not answer (an {@link IntentsError}) goes to
   * `onError` and the next round comes; anything inconsistent ends it.
   *
   * @throws {LogVerificationError} on anything inconsistent.
   */
  async watch(options: {
    intervalMs: number;
    signal?: AbortSignal;
    onRound?: (round: MonitorRound) => void;
    onError?: (error: IntentsError) => void;
  }): Promise<void> {
    const { signal } = options;
    while (!signal?.aborted) {
      try {
        options.onRound?.(await this.check(signal));
      } catch (error) {
        if (signal?.aborted) return;
        if (!(error instanceof IntentsError)) throw error;
        options.onError?.(error);
      }
      await pause(options.intervalMs, signal);
    }
  }
}
