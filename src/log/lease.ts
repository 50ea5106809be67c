/**
 * A short lease in the log's keys, so that one process at a time does a job
 * in the background (the integrator, the witness submitter): taken when free
 * or run out, renewed by the holder before it runs out, let go on stop. It
 * only saves duplicate work; what the job writes is checked on its own.
 * @module
 */

import { decodeLease, encodeLease } from "../storage/values_codec.ts";
import { retryWhileLocked } from "../storage/retry.ts";

/** One process's hold on one lease. */
export class LogLease {
  readonly #kv: Deno.Kv;
  readonly #key: Deno.KvKey;
  readonly #ms: number;
  readonly #now: () => number;
  readonly #holder = crypto.randomUUID();
  #heldUntil = 0;

  /**
   * @param options.key the lease's key.
   * @param options.ms how long it lasts unless renewed.
   * @param options.now the clock (Unix ms).
   */
  constructor(options: { kv: Deno.Kv; key: Deno.KvKey; ms: number; now: () => number }) {
    this.#kv = options.kv;
    this.#key = options.key;
    this.#ms = options.ms;
    this.#now = options.now;
  }

  /** The lease as the holder's next commit writes it, renewing it with its work. */
  write(): { key: Deno.KvKey; value: Uint8Array } {
    return {
      key: this.#key,
      value: encodeLease({ holder: this.#holder, until: this.#now() + this.#ms }),
    };
  }

  /** A commit that carried {@link write} succeeded: the lease lasts from now. */
  renewed(): void {
    this.#heldUntil = Math.max(this.#heldUntil, this.#now() + this.#ms - 100);
  }

  /** True when this process holds the lease, taken or renewed now if need be. */
  async hold(): Promise<boolean> {
    const now = this.#now();
    if (this.#heldUntil - now > this.#ms / 2) return true;
    const entry = await this.#kv.get<Uint8Array>(this.#key);
    const lease = decodeLease(entry.value);
    if (lease !== null && lease.holder !== this.#holder && lease.until > now) {
      this.#heldUntil = 0;
      return false;
    }
    const until = now + this.#ms;
    const op = this.#kv.atomic().check(entry)
      .set(this.#key, encodeLease({ holder: this.#holder, until }));
    const result = await retryWhileLocked(() => op.commit());
    this.#heldUntil = result.ok ? until : 0;
    return result.ok;
  }

  /** Lets the lease go, if this process holds it, so that another takes it at once. */
  async release(): Promise<void> {
    if (this.#heldUntil === 0) return;
    this.#heldUntil = 0;
    const entry = await this.#kv.get<Uint8Array>(this.#key);
    if (decodeLease(entry.value)?.holder !== this.#holder) return;
    const op = this.#kv.atomic().check(entry)
      .set(this.#key, encodeLease({ holder: this.#holder, until: 0 }));
    await retryWhileLocked(() => op.commit());
  }
}
