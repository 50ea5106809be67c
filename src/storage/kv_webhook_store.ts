/**
 * The webhook storage port (`src/webhooks/store.ts`) on Deno KV. Every
 * commit checks what it builds on: the endpoint as read (and the count, to
 * create or remove one); for a delivery, also the lease as its holder wrote
 * it; for a lease, the lease as read.
 * @module
 */

import type { AttemptRecord, Endpoint } from "../webhooks/endpoint.ts";
import {
  ATTEMPTS_KEPT,
  type CreateRefusal,
  type DeliveryCheck,
  type EndpointEntry,
  type Lease,
  WEBHOOK_WORK,
  type WebhookStore,
} from "../webhooks/store.ts";
import { NO_DATA } from "./codec.ts";
import type { Feed } from "./feed.ts";
import { keys } from "./keys.ts";
import {
  decodeAttempt,
  decodeCount,
  decodeEndpoint,
  decodeLease,
  encodeAttempt,
  encodeEndpoint,
  encodeLease,
} from "./values_codec.ts";

/** Reads and commits again this often when other writers keep coming first. */
const CONFLICT_ATTEMPTS = 64;

/** Due work entries of an endpoint a removal, the largest commit, takes with it, at most. */
export const DUE_REMOVED = 8;

/** Options of {@link KvWebhookStore}. */
interface KvWebhookStoreOptions {
  /** An open KV handle; the caller closes it. */
  kv: Deno.Kv;
  /** The feed of the same store (its head). */
  feed: Feed;
  /** Runs one write (the store's commit log: retries while locked, storage failures). */
  commit: <T>(write: () => Promise<T>) => Promise<T>;
  /** The clock of due work written for now. */
  now: () => Date;
  /** Puts into the feed every event answered so far, so that a new endpoint starts after them. */
  moveAll: () => Promise<void>;
  /** Resolves once this process's own answered events are in the feed. */
  settled: () => Promise<void>;
}

/** Webhook endpoints, leases and attempts on one `Deno.Kv`. */
export class KvWebhookStore implements WebhookStore {
  readonly #kv: Deno.Kv;
  readonly #o: KvWebhookStoreOptions;
  readonly #listeners = new Set<(id: string) => void>();

  constructor(options: KvWebhookStoreOptions) {
    this.#kv = options.kv;
    this.#o = options;
  }

  async feedHead(): Promise<number> {
    await this.#o.settled();
    return (await this.#o.feed.freshHead()).position;
  }

  async createEndpoint(
    make: (head: number) => Endpoint,
    limit: number,
  ): Promise<Endpoint | CreateRefusal> {
    for (let attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
      const count = await this.#kv.get<unknown>(keys.webhooksCount);
      const existing = decodeCount(count.value);
      if (existing >= limit) return "too_many";
      // Events answered before this request are before the endpoint's start.
      await this.#o.moveAll();
      const endpoint = make(await this.feedHead());
      const result = await this.#o.commit(() =>
        this.#kv.atomic()
          .check(count)
          .check({ key: keys.webhook(endpoint.id), versionstamp: null })
          .set(keys.webhook(endpoint.id), encodeEndpoint(endpoint))
          .set(keys.webhooksCount, new Deno.KvU64(BigInt(existing + 1)))
          .sum(keys.webhookChanges, 1n)
          .set(keys.due(WEBHOOK_WORK, this.#o.now().getTime(), endpoint.id), NO_DATA)
          .commit()
      );
      if (result.ok) {
        this.#changed(endpoint.id);
        return endpoint;
      }
    }
    throw new Error("webhook endpoints: other writers kept coming first");
  }

  async listEndpoints(): Promise<EndpointEntry[]> {
    const entries: EndpointEntry[] = [];
    for await (const entry of this.#kv.list<unknown>({ prefix: keys.webhooksPrefix })) {
      entries.push({ endpoint: decodeEndpoint(entry.value), version: entry.versionstamp });
    }
    return entries;
  }

  async getEndpoint(id: string): Promise<EndpointEntry | null> {
    const entry = await this.#kv.get<unknown>(keys.webhook(id));
    if (entry.versionstamp === null) return null;
    return { endpoint: decodeEndpoint(entry.value), version: entry.versionstamp };
  }

  async changeEndpoint(
    id: string,
    change: (endpoint: Endpoint) => Endpoint,
  ): Promise<Endpoint | null> {
    for (let attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
      const entry = await this.#kv.get<unknown>(keys.webhook(id));
      if (entry.versionstamp === null) return null;
      const before = decodeEndpoint(entry.value);
      const after = change(before);
      const resumed = after.status === "active" && before.status !== "active";
      const at = this.#o.now().getTime();
      const result = await this.#o.commit(() => {
        const op = this.#kv.atomic()
          .check(entry)
          .set(keys.webhook(id), encodeEndpoint(after))
          .sum(keys.webhookChanges, 1n);
        // Resumed: some process takes its lease at once (a held lease is left to its holder).
        if (resumed) op.set(keys.due(WEBHOOK_WORK, at, id), NO_DATA);
        return op.commit();
      });
      if (result.ok) {
        this.#changed(id);
        return after;
      }
    }
    throw new Error("webhook endpoints: other writers kept coming first");
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    for (let attempt = 0; attempt < CONFLICT_ATTEMPTS; attempt++) {
      const [entry, count, lease] = await this.#kv.getMany<unknown[]>([
        keys.webhook(id),
        keys.webhooksCount,
        keys.webhookLease(id),
      ]);
      if (entry.versionstamp === null) return false;
      const remove: Deno.KvKey[] = [keys.webhook(id)];
      // The holder's next write finds its lease gone.
      if (lease.versionstamp !== null) remove.push(keys.webhookLease(id));
      // Its due work too (any left behind later finds no endpoint and is dropped).
      for await (const due of this.#kv.list({ prefix: keys.duePrefix(WEBHOOK_WORK) })) {
        if (due.key[3] === id && remove.length < 1 + DUE_REMOVED) remove.push(due.key);
      }
      // Every attempt write changes the endpoint, which this commit checks: none is missed.
      for await (const attempt of this.#kv.list({ prefix: keys.webhookAttemptsPrefix(id) })) {
        remove.push(attempt.key);
      }
      const left = new Deno.KvU64(BigInt(Math.max(0, decodeCount(count.value) - 1)));
      const result = await this.#o.commit(() => {
        const op = this.#kv.atomic()
          .check(entry)
          .check(count)
          .set(keys.webhooksCount, left)
          .sum(keys.webhookChanges, 1n);
        for (const key of remove) op.delete(key);
        return op.commit();
      });
      if (result.ok) {
        this.#changed(id);
        return true;
      }
    }
    throw new Error("webhook endpoints: other writers kept coming first");
  }

  async listAttempts(id: string, limit: number): Promise<AttemptRecord[]> {
    const attempts: AttemptRecord[] = [];
    const listed = this.#kv.list<unknown>(
      { prefix: keys.webhookAttemptsPrefix(id) },
      { reverse: true, limit, batchSize: Math.min(limit, 100) },
    );
    for await (const entry of listed) attempts.push(decodeAttempt(entry.value));
    return attempts;
  }

  async recordAttempt(
    check: DeliveryCheck,
    after: Endpoint,
    attempt: AttemptRecord,
  ): Promise<string | null> {
    const id = after.id;
    const result = await this.#o.commit(() => {
      const op = this.#checked(check)
        .set(keys.webhook(id), encodeEndpoint(after))
        .set(keys.webhookAttempt(id, after.attempts), encodeAttempt(attempt));
      if (after.attempts > ATTEMPTS_KEPT) {
        op.delete(keys.webhookAttempt(id, after.attempts - ATTEMPTS_KEPT));
      }
      return op.commit();
    });
    return result.ok ? result.versionstamp : null;
  }

  async moveEndpoint(check: DeliveryCheck, after: Endpoint): Promise<string | null> {
    const result = await this.#o.commit(() =>
      this.#checked(check).set(keys.webhook(after.id), encodeEndpoint(after)).commit()
    );
    return result.ok ? result.versionstamp : null;
  }

  async getLease(id: string): Promise<Lease | null> {
    const entry = await this.#kv.get<unknown>(keys.webhookLease(id));
    if (entry.versionstamp === null) return null;
    // One that cannot be read has run out.
    const { holder, until } = decodeLease(entry.value) ?? { holder: "", until: 0 };
    return { id, holder, until, version: entry.versionstamp };
  }

  async takeLease(options: {
    id: string;
    holder: string;
    now: number;
    until: number;
    handled?: { at: number };
  }): Promise<Lease | null> {
    const { id, holder, until } = options;
    const entry = await this.#kv.get<unknown>(keys.webhookLease(id));
    const stale: Deno.KvKey[] = [];
    const held = decodeLease(entry.value);
    if (held) {
      if (held.holder !== holder && held.until > options.now) return null;
      stale.push(keys.due(WEBHOOK_WORK, held.until, id));
    }
    if (options.handled) stale.push(keys.due(WEBHOOK_WORK, options.handled.at, id));
    const result = await this.#o.commit(() => {
      const op = this.#kv.atomic().check(entry);
      for (const key of stale) op.delete(key);
      return op
        .set(keys.webhookLease(id), encodeLease({ holder, until }))
        .set(keys.due(WEBHOOK_WORK, until, id), NO_DATA)
        .commit();
    });
    return result.ok ? { id, holder, until, version: result.versionstamp } : null;
  }

  async renewLease(lease: Lease, until: number): Promise<Lease | null> {
    const key = keys.webhookLease(lease.id);
    const result = await this.#o.commit(() =>
      this.#kv.atomic()
        .check({ key, versionstamp: lease.version })
        .set(key, encodeLease({ holder: lease.holder, until }))
        .delete(keys.due(WEBHOOK_WORK, lease.until, lease.id))
        .set(keys.due(WEBHOOK_WORK, until, lease.id), NO_DATA)
        .commit()
    );
    return result.ok ? { ...lease, until, version: result.versionstamp } : null;
  }

  async releaseLease(lease: Lease, options: { wake: boolean; now: number }): Promise<boolean> {
    const key = keys.webhookLease(lease.id);
    const result = await this.#o.commit(() => {
      const op = this.#kv.atomic()
        .check({ key, versionstamp: lease.version })
        .delete(key)
        .delete(keys.due(WEBHOOK_WORK, lease.until, lease.id));
      if (options.wake) op.set(keys.due(WEBHOOK_WORK, options.now, lease.id), NO_DATA);
      return op.commit();
    });
    return result.ok;
  }

  async changeCount(): Promise<bigint> {
    const entry = await this.#kv.get<unknown>(keys.webhookChanges);
    return BigInt(decodeCount(entry.value));
  }

  onChange(listener: (id: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A commit that checks the endpoint as the attempt read it and the lease as its holder holds it. */
  #checked(check: DeliveryCheck): Deno.AtomicOperation {
    const id = check.before.endpoint.id;
    return this.#kv.atomic()
      .check({ key: keys.webhook(id), versionstamp: check.before.version })
      .check({ key: keys.webhookLease(id), versionstamp: check.leaseVersion });
  }

  #changed(id: string): void {
    for (const listener of this.#listeners) listener(id);
  }
}
