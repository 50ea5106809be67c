/**
 * What one grouped commit costs on a file KV by the shape of its keys: 32
 * intent pointers under random ids (UUIDv4, as most clients send) or under
 * ids that grow with time (UUIDv7), each with a 19 KB block of events, and
 * the block alone. The file first holds 50,000 random pointers, as a server's
 * does after a while. Deno KV keeps its rows in one SQLite B-tree (plus an
 * index on expiry), so each random key lands on a leaf page of its own, which
 * the commit writes to the WAL; keys that grow share their leaf pages.
 *
 * ```sh
 * deno run -A tools/measure/kv_keys.ts            # 200 commits of each shape, three times over
 * ```
 * @module
 */

import { join } from "node:path";
import { newIntentId } from "../../client/ids.ts";

const COMMITS = 200;

/** Milliseconds per commit of `build`, over {@link COMMITS} commits one after another. */
async function time(kv: Deno.Kv, build: (op: Deno.AtomicOperation) => void): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < COMMITS; n++) {
    const op = kv.atomic();
    build(op);
    await op.commit();
  }
  return (performance.now() - started) / COMMITS;
}

const dir = await Deno.makeTempDir({ prefix: "kv-keys-" });
const kv = await Deno.openKv(join(dir, "intents.kv"));
try {
  for (let round = 0; round < 100; round++) {
    const op = kv.atomic();
    for (let i = 0; i < 500; i++) op.set(["intents", crypto.randomUUID()], [round, i]);
    await op.commit();
  }
  const block = new Uint8Array(32 * 600);
  let position = 0;

  const pointers = (id: () => string) => (op: Deno.AtomicOperation) => {
    for (let i = 0; i < 32; i++) {
      const key = ["intents", id()];
      op.check({ key, versionstamp: null }).set(key, [position, i]);
    }
    op.set(["events", ++position], block);
  };
  const shapes: [string, (op: Deno.AtomicOperation) => void][] = [
    ["32 pointers under random ids (UUIDv4) and a block", pointers(() => crypto.randomUUID())],
    ["32 pointers under growing ids (UUIDv7) and a block", pointers(newIntentId)],
    ["the block alone", (op) => op.set(["events", ++position], block)],
  ];
  for (let round = 1; round <= 3; round++) {
    for (const [name, build] of shapes) {
      console.log(
        `round ${round}  ${name.padEnd(52)} ${(await time(kv, build)).toFixed(2)} ms/commit`,
      );
    }
  }
} finally {
  kv.close();
  await Deno.remove(dir, { recursive: true });
}
