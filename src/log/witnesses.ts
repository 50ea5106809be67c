/**
 * The witness submitter (docs/interface.md §14, "Witnesses"): one process at
 * a time, the holder of a short lease (`["log", "submitter"]`), sends each
 * witness the newest signed checkpoint with the consistency proof from the
 * size that witness last cosigned (kept in `["log", "witness", vkey]`),
 * follows a 409's size, and keeps the cosignatures that verify. The
 * checkpoint with its cosignatures is stored as the served one
 * (`["log", "witnessed"]`) once at least the quorum (and one) cosigned it.
 * A 409 with a size above the log's newest checkpoint, or a 422 (another
 * root for a size of ours), is a fork: recorded (`fork.ts`), said at error
 * level and in the metrics. Each witness has calls of its own, retried with
 * backoff; none waits for another, and intake never waits for any.
 * @module
 */

import { errorLine } from "../telemetry/error_line.ts";
import { consistencyProofNodes, proveConsistency } from "@intents/protocol/log/hash";
import { formatSignedNote, parseSignedNote } from "@intents/protocol/log/note";
import { inSpan } from "../telemetry/tracing.ts";
import { backoffMs, delay, Lanes } from "../timing.ts";
import { retryWhileLocked } from "../storage/retry.ts";
import { decodeCheckpoint, sameTree, type StoredCheckpoint } from "./checkpoints.ts";
import { forkLine, recordFork } from "./fork.ts";
import { decodeIndex, encodeIndex, encodeText, logKeys } from "./keys.ts";
import { LogLease } from "./lease.ts";
import type { LogMetrics } from "./metrics.ts";
import { storedTreeReader } from "./tiles.ts";
import {
  addCheckpointBody,
  type Judged,
  judgeWitnessAnswer,
  type WitnessPost,
} from "./witness_call.ts";
import type { WitnessSetting } from "./witness_settings.ts";

/** How long the lease lasts unless renewed. */
const LEASE_MS = 3_000;
/** How often the holder looks for a newer checkpoint, and others whether the lease is free. */
export const SUBMIT_LOOK_MS = 250;
/** Backoff of a witness's failed calls: up to 2 s, doubling, at most a minute. */
const BACKOFF_UNIT_MS = 2_000;
const BACKOFF_CEILING_MS = 60_000;
/** 409s followed in one go before the witness is left to its backoff. */
const CONFLICTS_FOLLOWED = 3;

/** What the submitter works with. */
export interface WitnessSubmitterOptions {
  kv: Deno.Kv;
  witnesses: readonly WitnessSetting[];
  /** `LOG_WITNESS_QUORUM`. */
  quorum: number;
  /** The log's verifier key. */
  logKey: string;
  post: WitnessPost;
  /** Where failures (once each until it works again) and forks are said. */
  report: (line: string) => void;
  metrics?: LogMetrics;
  /** The clock (Unix ms); default `Date.now`. */
  now?: () => number;
}

/** A checkpoint sent to the witnesses, and the cosignatures it has. */
interface Round {
  checkpoint: StoredCheckpoint;
  cosigned: Map<string, string>;
}

/** How many of the newest checkpoints sent gather cosignatures at once. */
const ROUNDS_KEPT = 8;

/** One witness's standing in this process. */
interface Standing {
  /** When its next call may go (Unix ms). */
  nextAt: number;
  failures: number;
  /** Its call under way. */
  busy: Promise<void> | null;
  /** The size of the checkpoint it cosigned in this process. */
  cosignedSize: number;
  lastFailure: string;
}

/** Sends checkpoints to witnesses in the background while this process holds the lease. */
export class WitnessSubmitter {
  readonly #o: WitnessSubmitterOptions;
  readonly #now: () => number;
  readonly #lease: LogLease;
  readonly #stopping = new AbortController();
  readonly #standing: Standing[];
  readonly #publishing = new Lanes();
  /**
   * The newest checkpoints sent, by size, each with its cosignature lines by
   * `name+key id`: a witness slower than the log's checkpoints still counts
   * towards the one it cosigned.
   */
  readonly #rounds = new Map<number, Round>();
  #running: Promise<void> | undefined;
  #forked = false;
  /** The loop's own failure, said once until it works again. */
  readonly #loop = { lastFailure: "" };

  constructor(options: WitnessSubmitterOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#lease = new LogLease({
      kv: options.kv,
      key: logKeys.submitter,
      ms: LEASE_MS,
      now: this.#now,
    });
    this.#standing = options.witnesses.map(() => ({
      nextAt: 0,
      failures: 0,
      busy: null,
      cosignedSize: 0,
      lastFailure: "",
    }));
  }

  /** Starts the background loop (once). */
  start(): void {
    this.#running ??= this.#run();
  }

  /** Stops the loop, cuts the calls under way, and lets the lease go. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#running;
    await Promise.all(this.#standing.map((s) => s.busy));
    await this.#lease.release().catch(() => {});
  }

  /**
   * One look: the newest checkpoint sent to every witness that has not
   * cosigned it and whose backoff is over. Tests call it directly.
   *
   * @returns once every call it started has ended.
   */
  async submit(): Promise<void> {
    await this.#look();
    await Promise.all(this.#standing.map((s) => s.busy));
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted && !this.#forked) {
      try {
        if (await this.#lease.hold()) await this.#look();
        this.#loop.lastFailure = "";
      } catch (error) {
        this.#say(this.#loop, `the witness submitter failed (retrying): ${errorLine(error)}`);
      }
      await delay(SUBMIT_LOOK_MS, signal);
    }
  }

  /** Starts a call to each witness due; does not wait for them. */
  async #look(): Promise<void> {
    const [entry, fork] = await this.#o.kv.getMany<[Uint8Array, Uint8Array]>([
      logKeys.checkpoint,
      logKeys.fork,
    ]);
    if (fork.value !== null) {
      this.#forked = true;
      this.#o.metrics?.fork();
      return;
    }
    const checkpoint = decodeCheckpoint(entry.value);
    if (checkpoint === null) return;
    if (!this.#rounds.has(checkpoint.size)) {
      this.#rounds.set(checkpoint.size, { checkpoint, cosigned: new Map() });
      // Map keys keep their insertion order: the oldest goes first.
      if (this.#rounds.size > ROUNDS_KEPT) this.#rounds.delete(this.#rounds.keys().next().value!);
    }
    const now = this.#now();
    this.#standing.forEach((standing, i) => {
      if (standing.busy || standing.cosignedSize === checkpoint.size || standing.nextAt > now) {
        return;
      }
      standing.busy = this.#call(i, checkpoint).catch((error) => {
        this.#fail(i, `${errorLine(error)}`);
      }).finally(() => standing.busy = null);
    });
  }

  /** Sends `checkpoint` to witness `i`, following its 409s. */
  async #call(i: number, checkpoint: StoredCheckpoint): Promise<void> {
    const witness = this.#o.witnesses[i];
    const { kv } = this.#o;
    const sizeKey = logKeys.witness(witness.key);
    let old = decodeSize((await kv.get<Uint8Array>(sizeKey)).value);
    // A size above this checkpoint: ask with 0, and the witness says its size.
    if (old > checkpoint.size) old = 0;
    for (let conflicts = 0; conflicts <= CONFLICTS_FOLLOWED; conflicts++) {
      if (this.#stopping.signal.aborted || this.#forked) return;
      const judged = await this.#attempt(i, old, checkpoint);
      if (judged === null) return;
      switch (judged.outcome) {
        case "cosigned": {
          await retryWhileLocked(() => kv.set(sizeKey, encodeIndex(checkpoint.size)));
          this.#succeed(i, checkpoint.size);
          const round = this.#rounds.get(checkpoint.size);
          if (round === undefined || !sameTree(round.checkpoint, checkpoint)) return;
          const { name, keyId } = judged.signature;
          round.cosigned.set(`${name}+${keyId}`, signatureLine(judged.signature));
          await this.#publish(round);
          return;
        }
        case "conflict": {
          const newest = decodeCheckpoint((await kv.get<Uint8Array>(logKeys.checkpoint)).value);
          const ours = Math.max(checkpoint.size, newest?.size ?? 0);
          if (judged.size > ours) {
            return await this.#fork(
              `witness ${witness.name} cosigned a tree of size ${judged.size}, ` +
                `above the log's newest checkpoint of size ${ours}`,
            );
          }
          await retryWhileLocked(() => kv.set(sizeKey, encodeIndex(judged.size)));
          // It cosigned a newer checkpoint of ours already: the next look sends the newest.
          if (judged.size > checkpoint.size) return;
          if (judged.size === old) break;
          old = judged.size;
          continue;
        }
        case "fork":
          return await this.#fork(`witness ${witness.name}: ${judged.why}`);
        default:
          this.#fail(i, judged.why, judged.outcome === "configuration");
          return;
      }
      break;
    }
    this.#fail(i, `a 409 that did not settle (its size: ${old})`);
  }

  /** One call: the body, the answer within the time limit, a span, a count; null when stopping. */
  async #attempt(i: number, old: number, checkpoint: StoredCheckpoint): Promise<Judged | null> {
    const witness = this.#o.witnesses[i];
    const proof = old === 0 || old === checkpoint.size ? [] : proveConsistency(
      old,
      checkpoint.size,
      await storedTreeReader(
        this.#o.kv,
        checkpoint.size,
        consistencyProofNodes(old, checkpoint.size),
      ),
    );
    const body = addCheckpointBody(old, proof, checkpoint.text);
    const attributes = {
      "intents.log.witness": witness.name,
      "intents.log.size": checkpoint.size,
      "intents.log.old_size": old,
    };
    return await inSpan(
      "intents.log.witness",
      { kind: "client", root: true, attributes },
      async (span) => {
        let answer;
        try {
          answer = await this.#o.post({ url: witness.url, body, signal: this.#stopping.signal });
        } catch (error) {
          if (this.#stopping.signal.aborted) return null;
          throw error;
        }
        const judged = judgeWitnessAnswer(answer, {
          signedNote: checkpoint.text,
          logKey: this.#o.logKey,
          witnessKey: witness.key,
          nowS: Math.floor(this.#now() / 1000),
        });
        span?.setAttribute("intents.outcome", judged.outcome);
        if (answer.status !== null) span?.setAttribute("http.response.status_code", answer.status);
        this.#o.metrics?.witnessCall(witness.name, judged.outcome, answer.durationMs);
        return judged;
      },
    );
  }

  /** Stores the checkpoint with its cosignatures as the served one, once they reach the quorum. */
  #publish(round: Round): Promise<void> {
    const { checkpoint } = round;
    return this.#publishing.run("witnessed", async () => {
      const { kv, quorum } = this.#o;
      const entry = await kv.get<Uint8Array>(logKeys.witnessed);
      const held = decodeCheckpoint(entry.value);
      if (held !== null && held.size > checkpoint.size) return;
      const note = parseSignedNote(checkpoint.text);
      const lines = new Map<string, string>();
      for (const s of note.signatures) lines.set(`${s.name}+${s.keyId}`, signatureLine(s));
      const cosignatures = new Map(round.cosigned);
      // What another holder gathered for the same checkpoint stays.
      if (held !== null && sameTree(held, checkpoint)) {
        for (const s of parseSignedNote(held.text).signatures) {
          const key = `${s.name}+${s.keyId}`;
          if (!lines.has(key) && !cosignatures.has(key)) cosignatures.set(key, signatureLine(s));
        }
      }
      if (cosignatures.size < Math.max(1, quorum)) return;
      const text = note.text + "\n" + [...lines.values(), ...cosignatures.values()].join("");
      if (held !== null && held.text === text) return;
      await retryWhileLocked(() =>
        kv.atomic().check(entry).set(logKeys.witnessed, encodeText(text)).commit()
      );
    });
  }

  async #fork(reason: string): Promise<void> {
    this.#forked = true;
    const recorded = await recordFork(this.#o.kv, reason);
    this.#o.metrics?.fork();
    this.#o.report(forkLine(recorded));
  }

  #succeed(i: number, size: number): void {
    const standing = this.#standing[i];
    standing.cosignedSize = size;
    standing.failures = 0;
    standing.nextAt = 0;
    standing.lastFailure = "";
  }

  #fail(i: number, why: string, configuration = false): void {
    const standing = this.#standing[i];
    standing.failures++;
    standing.nextAt = this.#now() +
      (configuration
        ? BACKOFF_CEILING_MS
        : backoffMs(standing.failures, BACKOFF_UNIT_MS, BACKOFF_CEILING_MS));
    const witness = this.#o.witnesses[i];
    // The name, never the URL: its path may carry a credential.
    this.#say(standing, `witness ${witness.name}: ${why}; retrying with backoff`);
  }

  /** Says a failure once until something else (or success) is said for the same thing. */
  #say(holder: { lastFailure: string }, line: string): void {
    if (holder.lastFailure === line) return;
    holder.lastFailure = line;
    this.#o.report(`intents: ${line}`);
  }
}

/** The size a witness last cosigned (0: never). */
function decodeSize(value: unknown): number {
  return value === null ? 0 : decodeIndex(value);
}

/** A signature line of a note, with its newline. */
function signatureLine(s: { name: string; keyId: number; signature: Uint8Array }): string {
  const note = formatSignedNote({ text: "x\n", signatures: [s] });
  return note.slice("x\n\n".length);
}
