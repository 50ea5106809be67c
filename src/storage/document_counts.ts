/**
 * How many intents each key has pending under one governed document
 * (docs/interface.md §12): one value per document (`keys.ts`), checked as
 * read by every commit that changes it; earlier versions' per-key counts are
 * taken in by the first.
 * @module
 */

import type { DocumentKind, StoredIntent } from "../domain/intent.ts";
import type { PendingIntent } from "../domain/store.ts";
import { keys } from "./keys.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The document a governed intent's counts belong to. */
export interface CountedDocument {
  kind: DocumentKind;
  id: string;
}

/** The document whose counts an intent changes. */
export function countedDocument(intent: { variant: "A" | "B"; refId: string }): CountedDocument {
  return { kind: intent.variant === "A" ? "template" : "policy", id: intent.refId };
}

/** An identity of a counted document, for maps. */
export function documentIdentity(doc: CountedDocument): string {
  return `${doc.kind}/${doc.id}`;
}

/**
 * The keys whose counts a stored intent raised when it was stored pending
 * (none when it was not counted): its submission's keys are its first
 * approvals, one per key of its authorship.
 */
export function storedIntentCountedKeys(intent: StoredIntent): string[] {
  if (!intent.counted || !intent.approval) return [];
  return intent.approval.approvals.slice(0, intent.authorship.signers.length).map((a) => a.key);
}

function parseCounts(value: unknown): Map<string, number> {
  const counts = new Map<string, number>();
  if (!(value instanceof Uint8Array)) return counts;
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(value));
  } catch {
    return counts;
  }
  if (parsed === null || typeof parsed !== "object") return counts;
  for (const [key, n] of Object.entries(parsed)) {
    if (Number.isSafeInteger(n) && (n as number) > 0) counts.set(key, n as number);
  }
  return counts;
}

/** The counts of one document as read, with the changes a commit makes to them. */
export class DocumentCounts {
  readonly #doc: CountedDocument;
  readonly #read: Map<string, number>;
  readonly #now: Map<string, number>;
  /** The version read (null: absent), which the commit checks. */
  readonly version: string | null;
  /** Per-key counts of earlier versions taken in, which the commit removes. */
  readonly #earlier: Deno.KvKey[];

  private constructor(
    doc: CountedDocument,
    read: Map<string, number>,
    version: string | null,
    earlier: Deno.KvKey[],
  ) {
    this.#doc = doc;
    this.#read = read;
    this.#now = new Map(read);
    this.version = version;
    this.#earlier = earlier;
  }

  /**
   * Reads a document's counts; where it has none yet, the per-key counts of
   * earlier versions are taken in.
   */
  static async read(kv: Deno.Kv, doc: CountedDocument): Promise<DocumentCounts> {
    const entry = await kv.get<unknown>(keys.pendingCounts(doc.kind, doc.id));
    if (entry.versionstamp !== null) {
      return new DocumentCounts(doc, parseCounts(entry.value), entry.versionstamp, []);
    }
    const counts = new Map<string, number>();
    const earlier: Deno.KvKey[] = [];
    const listed = kv.list<unknown>({ prefix: keys.pendingBySignerPrefix(doc.kind, doc.id) });
    for await (const old of listed) {
      const key = old.key.at(-1);
      earlier.push(old.key);
      if (typeof key === "string" && old.value instanceof Deno.KvU64 && old.value.value > 0n) {
        counts.set(key, Number(old.value.value));
      }
    }
    return new DocumentCounts(doc, counts, null, earlier);
  }

  /** The count of `key` as read. */
  stored(key: string): number {
    return this.#read.get(key) ?? 0;
  }

  /** The count of `key` with the changes made so far. */
  current(key: string): number {
    return this.#now.get(key) ?? 0;
  }

  /** Adds `by` (which may be negative) to each of `countedKeys`; a count never goes below 0. */
  add(countedKeys: readonly string[], by: number): void {
    for (const key of countedKeys) this.#now.set(key, Math.max(0, this.current(key) + by));
  }

  /**
   * Applies each intent's `maxPending` (docs/interface.md §12) to the pending
   * intents among `members` (indexes into `batch`, in order) against the
   * counts read, and counts the admitted ones.
   *
   * @returns the members refused (a key has `maxPending` pending already),
   *   and how many leading members the commit may carry: one whose admission
   *   depends on an earlier member of the same commit waits for the next one,
   *   where that member's outcome is known.
   */
  admit(
    batch: readonly PendingIntent[],
    members: readonly number[],
  ): { refused: number[]; carry: number } {
    const refused: number[] = [];
    let carry = members.length;
    members.forEach((i, k) => {
      const { intent, maxPending = Infinity } = batch[i];
      if (intent.state !== "pending") return;
      // The keys that signed its submission.
      const counted = (intent.approvals ?? []).map((a) => a.key);
      if (counted.some((key) => this.stored(key) >= maxPending)) refused.push(i);
      else if (counted.some((key) => this.current(key) >= maxPending)) carry = Math.min(carry, k);
      else if (k < carry) this.add(counted, 1);
    });
    return { refused, carry };
  }

  /** True when a commit must write these counts: a count changed, or earlier keys are taken in. */
  get changed(): boolean {
    if (this.#earlier.length > 0) return true;
    for (const [key, n] of this.#now) if (n !== this.stored(key)) return true;
    return false;
  }

  /**
   * Adds to `op` the check of the version read and the counts' new value
   * (removed when every count is 0), and removes the earlier keys taken in.
   */
  write(op: Deno.AtomicOperation): void {
    const key = keys.pendingCounts(this.#doc.kind, this.#doc.id);
    op.check({ key, versionstamp: this.version });
    const kept: Record<string, number> = {};
    let any = false;
    for (const [signer, n] of this.#now) {
      if (n > 0) {
        kept[signer] = n;
        any = true;
      }
    }
    if (any) op.set(key, encoder.encode(JSON.stringify(kept)));
    else if (this.version !== null) op.delete(key);
    for (const earlier of this.#earlier) op.delete(earlier);
  }
}
