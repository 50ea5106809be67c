/**
 * The client's log checks (docs/interface.md §14, "Clients") over trees
 * served from memory as tlog-tiles serves them: consistency proved from
 * tiles across sizes and tile boundaries, inclusion from tiles, and the
 * Monitor's state file and its loud failures (split view, shrinking tree,
 * another key, a tile that lies).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkCheckpoint,
  compareCheckpoints,
  IntentsError,
  LogApi,
  LogVerificationError,
  Monitor,
  type VerifiedCheckpoint,
} from "../../client/mod.ts";
import { formatCheckpoint } from "../../protocol/log/checkpoint.ts";
import { type HashReader, leafHash, memoryTree, treeHash } from "../../protocol/log/hash.ts";
import { generateNoteKey, parseSignerKey, signNote } from "../../protocol/log/note.ts";
import { parseTilePath, tileData } from "../../protocol/log/tile.ts";

const ORIGIN = "example.com/log";
const KEY = generateNoteKey(ORIGIN);
const signer = parseSignerKey(KEY.signerKey);

/** `n` leaf hashes; `salt` makes another history. */
function leaves(n: number, salt = ""): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => leafHash(new TextEncoder().encode(`${salt}${i}`)));
}

/** A log served from memory: its checkpoint of `size` and the tiles of that tree. */
class MemoryLog {
  size: number;
  tamper?: (path: string, data: Uint8Array) => Uint8Array;
  #trees = new Map<number, HashReader>();
  constructor(readonly hashes: Uint8Array[], size = hashes.length, readonly key = signer) {
    this.size = size;
  }
  note(): string {
    const rootHash = treeHash(this.hashes.slice(0, this.size));
    return signNote(formatCheckpoint({ origin: ORIGIN, size: this.size, rootHash }), [this.key]);
  }
  /** What the service answers a GET of `path` with. */
  call(path: string): Promise<Response> {
    if (path === "/log/checkpoint") return Promise.resolve(new Response(this.note()));
    const tile = parseTilePath(path.slice("/log/".length));
    let tree = this.#trees.get(this.size);
    if (!tree) this.#trees.set(this.size, tree = memoryTree(this.hashes.slice(0, this.size)));
    let data = tileData(tile, tree);
    if (this.tamper) data = this.tamper(path, data) as Uint8Array<ArrayBuffer>;
    return Promise.resolve(new Response(data));
  }
  api(): LogApi {
    return new LogApi((path) => this.call(path));
  }
  verified(): VerifiedCheckpoint {
    return checkCheckpoint(this.note(), { logKey: KEY.verifierKey });
  }
}

async function rejects(promise: Promise<unknown>, code: string) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof LogVerificationError, String(error));
    assert.equal(error.code, code);
    return true;
  });
}

Deno.test("a newer checkpoint is proved to extend an older one from tiles, across tile boundaries", async () => {
  const all = leaves(65_600);
  const log = new MemoryLog(all);
  for (
    const [a, b] of [[1, 2], [3, 7], [255, 256], [256, 257], [255, 513], [1000, 65_536], [
      65_535,
      65_600,
    ], [7, 7]]
  ) {
    log.size = a;
    const older = log.verified();
    log.size = b;
    await log.api().consistency(older, log.verified());
  }
  // Another history of the same sizes is not consistent with it.
  const other = new MemoryLog(leaves(600, "other"));
  log.size = 300;
  await rejects(other.api().consistency(log.verified(), other.verified()), "split_view");
  other.size = 300;
  await rejects(other.api().consistency(log.verified(), other.verified()), "split_view");
  other.size = 200;
  await rejects(other.api().consistency(log.verified(), other.verified()), "tree_shrank");
});

Deno.test("a tile that lies does not prove consistency or inclusion", async () => {
  const log = new MemoryLog(leaves(600));
  log.size = 300;
  const older = log.verified();
  log.size = 600;
  log.tamper = (_path, data) => {
    const copy = data.slice();
    copy[0] ^= 1;
    return copy;
  };
  await rejects(log.api().consistency(older, log.verified()), "split_view");
  await rejects(
    log.api().inclusion(new TextEncoder().encode("5"), 5, log.verified().checkpoint),
    "not_included",
  );
  log.tamper = (_path, data) => data.slice(0, 32);
  await rejects(log.api().consistency(older, log.verified()), "bad_tile");
});

Deno.test("an entry is found at its index from tiles, and nowhere else", async () => {
  const log = new MemoryLog(leaves(600));
  const { checkpoint } = log.verified();
  const entry = (i: number) => new TextEncoder().encode(String(i));
  for (const i of [0, 255, 256, 599]) await log.api().inclusion(entry(i), i, checkpoint);
  await rejects(log.api().inclusion(entry(3), 4, checkpoint), "not_included");
  await rejects(log.api().inclusion(entry(600), 600, checkpoint), "index_out_of_range");
});

Deno.test("compareCheckpoints: same, grown, or a split view with both notes as evidence", () => {
  const log = new MemoryLog(leaves(10));
  const trusted = log.verified();
  assert.equal(compareCheckpoints(trusted, log.verified()), "same");
  const other = new MemoryLog(leaves(10, "x")).verified();
  assert.throws(() => compareCheckpoints(trusted, other), (error) => {
    assert.ok(error instanceof LogVerificationError && error.code === "split_view");
    assert.deepEqual(error.evidence, { trusted: trusted.note, served: other.note });
    return true;
  });
  const bigger = new MemoryLog(leaves(12)).verified();
  assert.equal(compareCheckpoints(trusted, bigger), "grown");
});

Deno.test("the Monitor keeps the last trusted checkpoint and fails loudly, keeping its state", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const stateFile = join(dir, "state.json");
    const log = new MemoryLog(leaves(600), 3);
    const monitor = (on: MemoryLog, options: { logKey?: string } = {}) =>
      new Monitor({ log: on.api(), logKey: options.logKey ?? KEY.verifierKey, stateFile });
    const first = await monitor(log).check();
    assert.deepEqual([first.change, first.previousSize, first.size], ["first", null, 3]);
    const kept = JSON.parse(await Deno.readTextFile(stateFile));
    assert.equal(kept.checkpoint, log.note());
    assert.equal((await monitor(log).check()).change, "same");
    log.size = 300;
    const grown = await monitor(log).check();
    assert.deepEqual([grown.change, grown.previousSize, grown.size], ["grown", 3, 300]);
    const state = await Deno.readTextFile(stateFile);

    // Each of these fails with its code and leaves the state as it was.
    const fork = new MemoryLog(leaves(600, "fork"), 300);
    await rejects(monitor(fork).check(), "split_view");
    fork.size = 400;
    await rejects(monitor(fork).check(), "split_view");
    await rejects(monitor(new MemoryLog(leaves(600), 299)).check(), "tree_shrank");
    const stranger = parseSignerKey(generateNoteKey(ORIGIN).signerKey);
    await rejects(monitor(new MemoryLog(leaves(600), 301, stranger)).check(), "no_log_signature");
    assert.equal(await Deno.readTextFile(stateFile), state);

    // A state file that is not this log's own is refused, not overwritten.
    await rejects(
      monitor(log, { logKey: generateNoteKey(ORIGIN).verifierKey }).check(),
      "bad_state",
    );
    await Deno.writeTextFile(stateFile, "{");
    await rejects(monitor(log).check(), "bad_state");
    await Deno.writeTextFile(stateFile, state);

    // watch: rounds until aborted; a refusal of the service is reported and retried.
    const rounds: number[] = [];
    const errors: string[] = [];
    const stop = new AbortController();
    let checkpoints = 0;
    const flaky = new LogApi((path) => {
      if (path === "/log/checkpoint" && ++checkpoints === 1) {
        return Promise.reject(new IntentsError(503, "unavailable", "catching up"));
      }
      if (checkpoints === 2) stop.abort();
      return log.call(path);
    });
    log.size = 310;
    await new Monitor({ log: flaky, logKey: KEY.verifierKey, stateFile }).watch({
      intervalMs: 1,
      signal: stop.signal,
      onRound: (round) => rounds.push(round.size),
      onError: (error) => errors.push(error.code),
    });
    assert.deepEqual(errors, ["unavailable"]);
    assert.deepEqual(rounds, [310]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
