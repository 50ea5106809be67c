/**
 * A lease this process holds on one endpoint: the right to deliver to it
 * (docs/interface.md §11: one process at a time per endpoint).
 *
 * The lease and its renewals: docs/architecture.md, "Webhook delivery". A
 * delivery's write checks the lease's version as it stands at that moment:
 * the holder's own renewals do not fail it, a takeover does. Renewals and
 * writes of one lease take turns, so neither fails the other.
 *
 * The lease is lost when a renewal finds it taken (or removed with its
 * endpoint), or when `until` comes near without a successful renewal: then
 * {@link HeldLease.signal} aborts, which ends an attempt in flight, so that
 * this process never delivers to an endpoint while another may.
 * @module
 */

import type { Lease, WebhookStore } from "../webhooks/store.ts";
import { Lanes } from "../timing.ts";

/**
 * How long before `until` a holder that could not renew stops delivering:
 * room for a clock a little ahead elsewhere and for the attempt to end.
 */
export const LEASE_MARGIN_MS = 1_000;

/** A lease held by this process. */
export class HeldLease {
  readonly #store: Pick<WebhookStore, "renewLease" | "releaseLease">;
  readonly #now: () => number;
  #lease: Lease;
  readonly #turns = new Lanes();
  readonly #lost = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param lease as `takeLease` wrote it.
   * @param store where it is renewed and released.
   * @param now the clock `until` is compared with (Unix ms).
   */
  constructor(
    lease: Lease,
    store: Pick<WebhookStore, "renewLease" | "releaseLease">,
    now: () => number,
  ) {
    this.#lease = lease;
    this.#store = store;
    this.#now = now;
    this.#arm();
  }

  /** The endpoint's id. */
  get id(): string {
    return this.#lease.id;
  }

  /** The lease as last written. */
  get current(): Lease {
    return this.#lease;
  }

  /** Aborts when the lease is lost, expires without renewal, or is released. */
  get signal(): AbortSignal {
    return this.#lost.signal;
  }

  /** True while the lease is held. */
  get held(): boolean {
    return !this.#lost.signal.aborted;
  }

  /**
   * Runs a write checked against the lease's version as it stands, in the
   * lease's turn (no renewal runs meanwhile).
   *
   * @returns what `write` returned, or null when the lease is no longer held.
   */
  run<T>(write: (version: string) => Promise<T>): Promise<T | null> {
    return this.#turns.run(
      this.id,
      async () => this.held ? await write(this.#lease.version) : null,
    );
  }

  /**
   * Extends the lease to `until`.
   *
   * @returns false when it turned out to be lost (it is then given up here).
   * @throws what the store throws (the storage failed): the lease stays held
   *   until it expires, and the next renewal tries again.
   */
  async renew(until: number): Promise<boolean> {
    const renewed = await this.run(async (version) => {
      const next = await this.#store.renewLease({ ...this.#lease, version }, until);
      // Within the turn: the write after it runs with this version.
      if (next !== null) {
        this.#lease = next;
        this.#arm();
      }
      return next;
    });
    if (renewed === null) {
      this.lose("taken over or removed");
      return false;
    }
    return true;
  }

  /**
   * Gives the lease up; with `wake`, another process is asked to take it at
   * once. A storage failure here is left to the lease's expiry.
   */
  async release(wake: boolean): Promise<void> {
    await this.run((version) =>
      this.#store.releaseLease({ ...this.#lease, version }, { wake, now: this.#now() })
    ).catch(() => {});
    this.lose("released");
  }

  /** Stops holding the lease here, without a write: the signal aborts. */
  lose(reason: string): void {
    clearTimeout(this.#timer);
    if (!this.#lost.signal.aborted) this.#lost.abort(new Error(`webhook lease ${reason}`));
  }

  /** Gives the lease up here when `until` comes near without a renewal. */
  #arm(): void {
    clearTimeout(this.#timer);
    const left = this.#lease.until - LEASE_MARGIN_MS - this.#now();
    this.#timer = setTimeout(() => this.lose("expired"), Math.max(0, left));
  }
}
