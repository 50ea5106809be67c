/**
 * The files of the passkey page, read once per app and kept, relative to
 * this module's URL so that they travel with the code (on Deno Deploy too).
 * @module
 */

import { hex } from "@scure/base";

/** A file of the page as served. */
export interface StaticFile {
  bytes: Uint8Array;
  type: string;
  /** A strong ETag: the first 16 bytes of the SHA-256 of the bytes, in hex. */
  etag: string;
}

const STATIC_DIR = new URL("../../static/", import.meta.url);

/**
 * The page's files as they are read: one per app, built by `createApp`.
 *
 * @example
 * ```ts
 * const files = new StaticFiles();
 * const page = await files.load("index.html", "text/html; charset=utf-8");
 * page.etag; // e.g. "\"0f3a…\""
 * ```
 */
export class StaticFiles {
  readonly #loaded = new Map<string, Promise<StaticFile>>();

  /** @param dir where the files are; default the repository's `static/`. */
  constructor(readonly dir: URL = STATIC_DIR) {}

  /**
   * The file `name` of `dir`, read once and kept (a failed read is not); `name`
   * must come from an allow-list, never from a URL.
   */
  load(name: string, type: string): Promise<StaticFile> {
    let file = this.#loaded.get(name);
    if (!file) {
      file = this.#read(name, type);
      file.catch(() => this.#loaded.delete(name));
      this.#loaded.set(name, file);
    }
    return file;
  }

  async #read(name: string, type: string): Promise<StaticFile> {
    const bytes = await readFile(new URL(name, this.dir));
    const digest = new Uint8Array(
      await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>),
    );
    return { bytes, type, etag: `"${hex.encode(digest.subarray(0, 16))}"` };
  }
}

async function readFile(url: URL): Promise<Uint8Array> {
  if (url.protocol === "file:") return await Deno.readFile(url);
  // Running from a remote module URL: the files sit beside it at the same base.
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}
