/**
 * The log as the edge reads it (the port `src/domain/log.ts`): the served
 * checkpoint (cached per process for up to half a second): the newest signed one
 * or, when it is as new, the one with the witnesses' cosignatures; with a
 * quorum, only the newest that at least that many cosigned. Tiles and
 * entry bundles at any width the tree holds (a bundle made from the feed's
 * events, whose entries are fixed with them), and inclusion proofs against
 * the served checkpoint, by index or by leaf hash.
 * @module
 */

import { inclusionProofNodes, proveInclusion } from "@intents/protocol/log/hash";
import { formatTlogProof } from "@intents/protocol/log/proof";
import { encodeEntryBundle, type Tile, TILE_WIDTH } from "@intents/protocol/log/tile";
import type { LogReader, ServedCheckpoint } from "../domain/log.ts";
import type { Store } from "../domain/store.ts";
import { decodeCheckpoint } from "./checkpoints.ts";
import { readEntries } from "./integrate.ts";
import { decodeState, logKeys } from "./keys.ts";
import { findLeaf } from "./leaf_index.ts";
import { storedTreeReader, tileKey } from "./tiles.ts";

/** How long one process serves the checkpoint it read (docs/interface.md §14). */
export const CHECKPOINT_CACHE_MS = 500;

/** What {@link KvLogReader} reads. */
export interface KvLogReaderOptions {
  kv: Deno.Kv;
  /**
   * The feed: whether it has an event yet (an empty log is 404, one
   * catching up 503), and the events that entry bundles are made from.
   */
  store: Pick<Store, "isPosition" | "readEvents">;
  /** The log's verifier key, once the key is known. */
  verifierKey: () => Promise<string>;
  /** A monotonic clock in milliseconds; default `performance.now`. */
  clock?: () => number;
  /** `LOG_WITNESS_QUORUM` (default 0). */
  quorum?: number;
}

/** The log read from Deno KV. */
export class KvLogReader implements LogReader {
  readonly #kv: Deno.Kv;
  readonly #store: KvLogReaderOptions["store"];
  readonly #clock: () => number;
  readonly #quorum: number;
  readonly verifierKey: () => Promise<string>;
  #cached: { at: number; value: Promise<ServedCheckpoint> } | undefined;

  constructor(options: KvLogReaderOptions) {
    this.#kv = options.kv;
    this.#store = options.store;
    this.verifierKey = options.verifierKey;
    this.#clock = options.clock ?? (() => performance.now());
    this.#quorum = options.quorum ?? 0;
  }

  checkpoint(): Promise<ServedCheckpoint> {
    const now = this.#clock();
    if (this.#cached === undefined || now - this.#cached.at >= CHECKPOINT_CACHE_MS) {
      const value = this.#readCheckpoint();
      this.#cached = { at: now, value };
      // A failed read is not kept.
      value.catch(() => {
        if (this.#cached?.value === value) this.#cached = undefined;
      });
    }
    return this.#cached.value;
  }

  async #readCheckpoint(): Promise<ServedCheckpoint> {
    const [signed, witnessed] = (await this.#kv.getMany<[Uint8Array, Uint8Array]>([
      logKeys.checkpoint,
      logKeys.witnessed,
    ])).map((entry) => decodeCheckpoint(entry.value));
    const served = this.#quorum > 0 || (witnessed !== null && witnessed.size >= (signed?.size ?? 0))
      ? witnessed
      : signed;
    if (served !== null) return { state: "ready", text: served.text, size: served.size };
    if (signed !== null) return { state: "witnessing" };
    return (await this.#store.isPosition(1)) ? { state: "catching_up" } : { state: "empty" };
  }

  async tile(tile: Tile): Promise<Uint8Array<ArrayBuffer> | null> {
    if (tile.level === "entries") return await this.#bundle(tile.index, tile.width);
    const { value } = await this.#kv.get<Uint8Array>(tileKey(tile));
    if (!(value instanceof Uint8Array)) return null;
    return value.length < tile.width * 32 ? null : value.slice(0, tile.width * 32);
  }

  /**
   * Entry bundle `index` at `width`, once the tree holds its entries: the
   * commitments of the feed's events at those positions, read a megabyte of
   * records at a time.
   *
   * @throws {Error} when the feed lacks an event the tree holds.
   */
  async #bundle(index: number, width: number): Promise<Uint8Array<ArrayBuffer> | null> {
    const first = index * TILE_WIDTH;
    const { size } = decodeState((await this.#kv.get(logKeys.state)).value);
    if (size < first + width) return null;
    const entries: Uint8Array[] = [];
    while (entries.length < width) {
      const after = first + entries.length;
      const read = await readEntries(this.#store, after, width - entries.length);
      if (read === null) {
        throw new Error(`the feed has no event after ${after}, below the tree's size`);
      }
      entries.push(...read.entries);
    }
    return encodeEntryBundle(entries);
  }

  async proveIndex(index: number): Promise<string | null> {
    const served = await this.checkpoint();
    if (served.state !== "ready" || index >= served.size) return null;
    const nodes = inclusionProofNodes(index, served.size);
    const read = await storedTreeReader(this.#kv, served.size, nodes);
    return formatTlogProof({
      index,
      proof: proveInclusion(index, served.size, read),
      checkpoint: served.text,
    });
  }

  async proveLeaf(leafHash: Uint8Array): Promise<string | null> {
    const served = await this.checkpoint();
    if (served.state !== "ready") return null;
    const index = await findLeaf(this.#kv, leafHash, served.size);
    return index === null ? null : await this.proveIndex(index);
  }
}
