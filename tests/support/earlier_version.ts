/**
 * An earlier version of the service, checked out from this repository's
 * history into a temp folder, to run beside this one (upgrade tests).
 * @module
 */

import { projectRoot, spawnServer } from "../../testing/spawn_server.ts";
import { TEST_ADMIN_TOKEN, TEST_LIMITS_OFF } from "./server.ts";
import { newTestStore, type StoreKind, type TestStore } from "./stores.ts";
import type { Payload } from "../../client/mod.ts";
import { bodyOf, ed25519Signer, newSigned } from "./governed.ts";

/**
 * The last commit whose version writes only the head layout
 * (`src/storage/write_layout.ts`): the version an upgrade starts from.
 */
export const HEAD_LAYOUT_COMMIT = "1e75443";

/**
 * The last commit whose staged layout copied staged events into the feed
 * and kept each record under its id (docs/decisions.md, each event is
 * written once).
 */
export const STAGED_COPY_COMMIT = "3efe98b";

/** The last commit before the feed existed: intents in blocks under `["intent_batches", …]`. */
export const PRE_FEED_COMMIT = "9adcb92";

/**
 * True when git and `commit` are at hand in this checkout's history; when
 * not (a shallow clone), says on stderr that `test`'s tests beside the
 * earlier version are ignored.
 */
export async function hasCommit(commit: string, test: string): Promise<boolean> {
  let found = false;
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", projectRoot, "cat-file", "-e", `${commit}^{commit}`],
      stdout: "null",
      stderr: "null",
    }).output();
    found = out.success;
  } catch {
    // No git: as a commit not found.
  }
  if (!found) {
    console.error(
      `${test}: commit ${commit} is not in this checkout's history (a shallow clone): ` +
        "the tests beside the earlier version are ignored",
    );
  }
  return found;
}

/**
 * Writes the files of `commit` into a new temp folder (`git archive`).
 *
 * @returns the folder and a function that removes it.
 * @throws {Error} when git cannot.
 */
export async function checkOut(
  commit: string,
): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: `intents-${commit}-` });
  const archive = await new Deno.Command("sh", {
    args: ["-c", `git -C "$0" archive "$1" | tar -x -C "$2"`, projectRoot, commit, dir],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!archive.success) {
    await Deno.remove(dir, { recursive: true });
    throw new Error(`git archive ${commit}: ${new TextDecoder().decode(archive.stderr)}`);
  }
  return { dir, remove: () => Deno.remove(dir, { recursive: true }) };
}

/** Posts `body` to `POST /intents` of the server at `url`; the answer's status. */
export async function submit(url: string, body: unknown): Promise<number> {
  const response = await fetch(`${url}/intents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await response.body?.cancel();
  return response.status;
}

/** An earlier version serving a store of its own, and the policy it stored there. */
export interface Earlier {
  /** The earlier server's base URL. */
  url: string;
  /** The store it serves, for this version to share. */
  store: TestStore;
  /** A plain policy the earlier version stored, to submit under. */
  policyId: string;
  /** A new intent under that policy, signed by one key: its id and its body. */
  sign(): Promise<{ id: string; body: unknown }>;
  /** What the earlier server wrote to stderr (its latest part). */
  stderr(): string;
  /** Stops the earlier server only (safe to call again). */
  stopServer(): Promise<void>;
  /** Stops the earlier server, removes its files and the store. */
  stop(): Promise<void>;
}

/**
 * Checks out `commit`, starts it on a new store of `kind` (it begins the
 * store as that version does) and stores a plain policy through it.
 */
export async function startEarlier(commit: string, kind: StoreKind): Promise<Earlier> {
  const earlier = await checkOut(commit);
  const store = await newTestStore(kind);
  const env = { KV_PATH: store.kvPath, ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...TEST_LIMITS_OFF };
  let old: Awaited<ReturnType<typeof spawnServer>> | undefined;
  try {
    old = await spawnServer({ root: earlier.dir, env });
    const response = await fetch(`${old.url}/policies`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "text/plain" },
      body: `a policy stored by ${commit}`,
    });
    const { id } = await response.json();
    const server = old;
    const signer = ed25519Signer();
    return {
      url: server.url,
      store,
      policyId: id,
      sign: async () => {
        const signed = newSigned("policy", id) as Payload;
        return {
          id: (signed as unknown as { id: string }).id,
          body: bodyOf(signed, await signer.sign(signed)),
        };
      },
      stderr: () => server.stderr(),
      stopServer: async () => {
        await server.stop();
      },
      stop: async () => {
        await server.stop();
        await earlier.remove();
        await store.close();
      },
    };
  } catch (error) {
    await old?.stop();
    await earlier.remove();
    await store.close();
    throw error;
  }
}
