/**
 * The one connection a deliverer keeps open to its endpoint between attempts
 * (HTTP/1.1 keep-alive), reused only under the rules a new one is made under:
 * the same origin, and an address among those the attempt just judged
 * (docs/interface.md §11, docs/architecture.md: Webhook delivery).
 * @module
 */

import { closeQuietly } from "./_deadline.ts";

/** How long a connection is kept without use: below the 5 s at which receivers commonly close. */
export const KEEP_IDLE_MS = 4_000;

interface Kept {
  conn: Deno.Conn;
  origin: string;
  address: string;
  timer: ReturnType<typeof setTimeout>;
}

/** At most one idle connection, for one deliverer. */
export class KeptConnection {
  #kept: Kept | undefined;

  /**
   * The kept connection to `origin` at one of `addresses`, taken out (the
   * caller closes or keeps it again); any other is closed.
   */
  take(origin: string, addresses: readonly string[]): { conn: Deno.Conn; address: string } | null {
    const kept = this.#kept;
    if (kept === undefined) return null;
    this.#kept = undefined;
    clearTimeout(kept.timer);
    if (kept.origin === origin && addresses.includes(kept.address)) {
      return { conn: kept.conn, address: kept.address };
    }
    closeQuietly(kept.conn);
    return null;
  }

  /** Keeps `conn` for the next attempt, for at most {@link KEEP_IDLE_MS}. */
  keep(conn: Deno.Conn, origin: string, address: string): void {
    this.close();
    const timer = setTimeout(() => this.close(), KEEP_IDLE_MS);
    // An idle connection does not keep the process alive.
    Deno.unrefTimer(timer);
    this.#kept = { conn, origin, address, timer };
  }

  /** Closes the kept connection, if any. */
  close(): void {
    const kept = this.#kept;
    this.#kept = undefined;
    if (kept === undefined) return;
    clearTimeout(kept.timer);
    closeQuietly(kept.conn);
  }
}
