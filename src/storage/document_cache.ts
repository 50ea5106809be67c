/**
 * What one process remembers of templates and policies, which never change:
 * references, bytes, and ids found missing lately, in bounded `ClockCache`s.
 * @module
 */

import type { DocumentKind, DocumentRef, StoredDocument } from "../domain/intent.ts";
import { ClockCache } from "../clock_cache.ts";

/** How long an id found missing reads as missing without a KV read (ms). */
export const MISSING_KEPT_MS = 1_000;

/** Template/policy references remembered (a few hundred bytes each). */
const REFS_CACHED = 1024;
/** Documents whose bytes are remembered: at most `MAX_BODY_BYTES` each (32 KiB by default). */
const DOCUMENTS_CACHED = 256;
/** Ids remembered as missing (a few dozen bytes each). */
const MISSING_CACHED = 1024;

function keyOf(kind: DocumentKind, id: string): string {
  return `${kind}/${id}`;
}

/** Found documents, their references, and ids found missing a moment ago. */
export class DocumentCache {
  readonly #refs = new ClockCache<DocumentRef>(REFS_CACHED);
  readonly #documents = new ClockCache<StoredDocument>(DOCUMENTS_CACHED);
  /** When each id was last read and found missing (Unix ms). */
  readonly #missing = new ClockCache<number>(MISSING_CACHED);

  /** The reference found before, or undefined. */
  ref(kind: DocumentKind, id: string): DocumentRef | undefined {
    return this.#refs.get(keyOf(kind, id));
  }

  /**
   * The document found before; null when it was found missing less than
   * {@link MISSING_KEPT_MS} before `now` (Unix ms); undefined when it must be read.
   */
  document(kind: DocumentKind, id: string, now: number): StoredDocument | null | undefined {
    const key = keyOf(kind, id);
    const found = this.#documents.get(key);
    if (found !== undefined) return found;
    const missedAt = this.#missing.get(key);
    if (missedAt === undefined) return undefined;
    // A clock set back does not make a miss last longer.
    if (now >= missedAt && now - missedAt < MISSING_KEPT_MS) return null;
    this.#missing.delete(key);
    return undefined;
  }

  /** Keeps what a read found: the document, and its reference when it was made. */
  found(kind: DocumentKind, id: string, document: StoredDocument, ref?: DocumentRef): void {
    const key = keyOf(kind, id);
    this.#missing.delete(key);
    this.#documents.set(key, document);
    if (ref !== undefined) this.#refs.set(key, ref);
  }

  /** Remembers that a read at `at` (Unix ms) found no such document. */
  missing(kind: DocumentKind, id: string, at: number): void {
    this.#missing.set(keyOf(kind, id), at);
  }

  /** Forgets a miss: this process stored the document, or found it stored. */
  stored(kind: DocumentKind, id: string): void {
    this.#missing.delete(keyOf(kind, id));
  }

  /** Forgets a reference whose version a commit found changed (its value was rewritten). */
  stale(ref: DocumentRef): void {
    this.#refs.delete(keyOf(ref.kind, ref.id));
  }
}
