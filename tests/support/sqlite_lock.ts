/**
 * Another process holding a KV file's SQLite write lock, as a second program
 * writing to the same file would: `holdWriteLock(path)` starts it and
 * resolves once the lock is held; `release()` ends it. Run as a program, this
 * module takes the lock and holds it until its standard input closes.
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";

/** A process holding the write lock of a SQLite file. */
export interface HeldLock {
  /** Ends the holding process (its transaction rolls back) and waits for it. */
  release(): Promise<void>;
}

/**
 * Starts a process that takes `path`'s write lock (`BEGIN IMMEDIATE`) and
 * keeps it.
 *
 * @returns once the lock is held.
 */
export async function holdWriteLock(path: string): Promise<HeldLock> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", fileURLToPath(import.meta.url), path],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  const said = new TextDecoder().decode(first.value ?? new Uint8Array());
  if (!said.startsWith("locked")) {
    child.kill();
    await child.status;
    throw new Error(`the lock holder did not take the lock: ${said}`);
  }
  reader.releaseLock();
  return {
    async release() {
      await child.stdin.close().catch(() => {});
      await child.stdout.cancel().catch(() => {});
      await child.status;
    },
  };
}

if (import.meta.main) {
  const db = new DatabaseSync(Deno.args[0]);
  db.exec("BEGIN IMMEDIATE");
  await Deno.stdout.write(new TextEncoder().encode("locked\n"));
  // Held until the parent closes our standard input (or goes away).
  for await (const _ of Deno.stdin.readable) { /* nothing is expected */ }
  db.exec("ROLLBACK");
  db.close();
}
