/**
 * The one connection a deliverer keeps open to its endpoint between
 * attempts (HTTP/1.1 keep-alive), so that an endpoint taking events one
 * after another does not pay a TCP and TLS handshake for each.
 *
 * A kept connection is reused only under the rules a new one is made under
 * (docs/interface.md §11): the attempt resolves the name and judges its addresses
 * first, and the connection serves only when it goes to the same origin
 * (scheme, name, port: the name its TLS certificate was checked against)
 * and to an address among those just judged. A name that now resolves
 * elsewhere gets a new connection to a judged address; one that now
 * resolves to a refused address is refused before any connection is used.
 * @module
 */

import { closeQuietly } from "./_deadline.ts";

/**
 * How long a connection is kept without use: less than the idle timeouts
 * receivers commonly close at (Node's 5 s), so that a kept connection is
 * seldom found closed by the other side. One that is (the next request gets
 * no byte back) is closed, and the attempt goes on a new connection.
 */
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
