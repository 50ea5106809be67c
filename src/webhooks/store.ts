/**
 * What webhooks need of the storage: the port `src/storage/kv_webhook_store.ts`
 * implements on Deno KV (`KvStore.webhooks`). Per endpoint it keeps the
 * endpoint (its cursor and retry state), its lease and its attempts log;
 * every write a delivery makes is checked against the endpoint and the lease
 * as the deliverer read them, so an admin change or a new holder wins.
 * @module
 */

import type { AttemptRecord, Endpoint } from "./endpoint.ts";

/**
 * The due-work kind of an endpoint whose lease may be free: written at its
 * creation and resumption, at its lease's end (moved at each renewal) and at
 * a release, so that some process looks at it then and takes the lease
 * (`src/scheduler/`).
 */
export const WEBHOOK_WORK = "webhook";

/** Attempts kept per endpoint (docs/interface.md §11). */
export const ATTEMPTS_KEPT = 100;

/** An endpoint as read, with the version its writes check. */
export interface EndpointEntry {
  endpoint: Endpoint;
  version: string;
}

/** A lease as read or written: who holds it, until when, and the version its next write checks. */
export interface Lease {
  id: string;
  holder: string;
  /** Unix ms. */
  until: number;
  version: string;
}

/** Why creating an endpoint failed. */
export type CreateRefusal = "too_many";

/** What a write made by the deliverer checks: the endpoint and the lease as it read them. */
export interface DeliveryCheck {
  before: EndpointEntry;
  /** The version of the lease the deliverer holds now (its own renewals change it). */
  leaseVersion: string;
}

/** The webhook storage port. */
export interface WebhookStore {
  /** The feed's newest position, read now. */
  feedHead(): Promise<number>;

  /**
   * Stores a new endpoint, made by `make` from the feed's head, unless
   * `limit` endpoints exist; due work is written so that a process takes its
   * lease at once.
   */
  createEndpoint(
    make: (head: number) => Endpoint,
    limit: number,
  ): Promise<Endpoint | CreateRefusal>;
  /** Every endpoint, oldest first. */
  listEndpoints(): Promise<EndpointEntry[]>;
  getEndpoint(id: string): Promise<EndpointEntry | null>;
  /**
   * Changes an endpoint: reads it, asks `change` for its next value, and
   * stores that in one commit checked against what was read, reading and
   * asking again when a delivery or another change came first. An endpoint
   * that becomes active gets due work, so that a process takes its lease.
   *
   * @returns the endpoint as stored, or null when there is none.
   */
  changeEndpoint(id: string, change: (endpoint: Endpoint) => Endpoint): Promise<Endpoint | null>;
  /** Removes an endpoint, its lease and its attempts log; false when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  /** The latest attempts, newest first. */
  listAttempts(id: string, limit: number): Promise<AttemptRecord[]>;

  /**
   * Records an attempt and the endpoint after it, in one commit checked
   * against `check`; the attempt becomes number `after.attempts` of the log
   * and the one {@link ATTEMPTS_KEPT} before it goes.
   *
   * @returns the endpoint's new version, or null when the endpoint or the lease changed.
   */
  recordAttempt(
    check: DeliveryCheck,
    after: Endpoint,
    attempt: AttemptRecord,
  ): Promise<string | null>;
  /**
   * Stores the endpoint moved past events not of its types, checked as
   * {@link recordAttempt} is.
   *
   * @returns the endpoint's new version, or null when the endpoint or the lease changed.
   */
  moveEndpoint(check: DeliveryCheck, after: Endpoint): Promise<string | null>;

  /** The lease of an endpoint as it stands, or null when none is held. */
  getLease(id: string): Promise<Lease | null>;
  /**
   * Takes the lease of endpoint `id` for `holder` until `until`, when it is
   * free, expired at `now`, or already `holder`'s; the due work `handled`
   * (the entry that asked for this) goes in the same commit, and new due
   * work is written at the lease's end.
   *
   * @returns the lease, or null when another holder has it.
   */
  takeLease(options: {
    id: string;
    holder: string;
    now: number;
    until: number;
    handled?: { at: number };
  }): Promise<Lease | null>;
  /**
   * Extends a held lease to `until`, checked against `lease`'s version;
   * its due work moves along.
   *
   * @returns the renewed lease, or null when it is no longer held (taken over, or removed).
   */
  renewLease(lease: Lease, until: number): Promise<Lease | null>;
  /**
   * Gives a lease up, checked against its version. With `wake`, due work is
   * written for now, so that another process takes it over at once.
   *
   * @returns false when it was no longer held.
   */
  releaseLease(lease: Lease, options: { wake: boolean; now: number }): Promise<boolean>;

  /**
   * A number that grows with every change made through the admin calls
   * (creations, updates, replays, rotations, removals) by any process:
   * deliverers look at it to notice changes made elsewhere.
   */
  changeCount(): Promise<bigint>;
  /**
   * Calls `listener` with an endpoint's id after each change this store
   * made to it (not a delivery's): the deliverers of this process notice at once.
   *
   * @returns a function that stops the calls.
   */
  onChange(listener: (id: string) => void): () => void;
}
