/**
 * Ports for test servers that are told their port before they listen, or
 * keep it across a restart: drawn below the kernel's ephemeral range (from
 * 32,768 on), where no outgoing connection or port-0 listener of a parallel
 * test lands.
 * @module
 */

/** A port from 20,000 to 31,999 at random: another test may draw it too (check, or retry). */
export function quietPort(): number {
  return 20_000 + Math.floor(Math.random() * 12_000);
}

/** A {@link quietPort} that nothing listens on now. */
export function freeQuietPort(): number {
  for (;;) {
    const port = quietPort();
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    }
  }
}
