/**
 * The server a load tool measures: a script (`main.ts`, or the reference
 * server) started by `testing/spawn_server.ts` as `deno task start` starts
 * it, or as Deno Deploy does, on a temp KV file of its own; and which commit
 * it runs.
 * @module
 */

import { join } from "node:path";
import { projectRoot, spawnServer } from "../../testing/spawn_server.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";

export { projectRoot };

/**
 * The settings that turn off the limits of docs/interface.md §12, which are
 * on by default: one load client sends from one address far more than a
 * user would.
 */
export const LIMITS_OFF: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_ADDRESS: "0",
  RATE_LIMIT_PER_SIGNER: "0",
  RATE_LIMIT_AUTH_FAILURES: "0",
  MAX_PENDING_PER_SIGNER: "1000000",
};

/** A server a tool started: a script with a temp KV file. */
export interface Spawned {
  url: string;
  /** The admin token it was given. */
  token: string;
  pid: number;
  stop(): Promise<void>;
}

/** Options of {@link spawnLoadServer}. */
export interface SpawnOptions {
  /** Script to run, relative to `root`. */
  script: string;
  /** `COMMIT_BATCH_MAX`. */
  batchMax: number;
  /** The checkout to run it from (its folder is the working directory); default: this one. */
  root?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * Start it as Deno Deploy does: no V8 flags, `DENO_DEPLOY=true`; default:
   * as `deno task start` does (a 2 MB young generation).
   */
  deploy?: boolean;
}

/**
 * Starts a server script on 127.0.0.1 (any free port) with a temp KV file and
 * waits until it listens; its request log is discarded.
 *
 * @throws {Error} when it exits or does not listen within 20 s.
 */
export async function spawnLoadServer(options: SpawnOptions): Promise<Spawned> {
  const dir = await Deno.makeTempDir({ prefix: "intents-load-" });
  const token = crypto.randomUUID().replaceAll("-", "");
  let server;
  try {
    server = await spawnServer({
      script: options.script,
      root: options.root,
      // The same V8 flag as `deno task start`: a small young generation keeps RSS low.
      flags: ["--quiet", ...(options.deploy ? [] : ["--v8-flags=--max-semi-space-size=2"])],
      env: {
        KV_PATH: join(dir, "intents.kv"),
        ADMIN_TOKEN: token,
        COMMIT_BATCH_MAX: String(options.batchMax),
        PASSKEY_ORIGINS: "http://localhost:8000",
        // A measurement is one client at full speed: the abuse limits are turned off, and
        // pending intents may pile up.
        ...LIMITS_OFF,
        // Where DENO_DEPLOY=true the log's key must be given: one for this run.
        ...(options.deploy
          ? { DENO_DEPLOY: "true", LOG_SIGNING_KEY: generateNoteKey("load.test/intents").signerKey }
          : {}),
        ...options.env,
      },
      stdout: "discard",
    });
  } catch (error) {
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
  return {
    url: server.url,
    token,
    pid: server.pid,
    async stop() {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The short commit id of a checkout, for telling rounds apart; null outside git. */
export async function commitOf(dir: string): Promise<string | null> {
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", dir, "rev-parse", "--short", "HEAD"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}
