/**
 * Starts a server script as a process of its own and waits until it says on
 * stderr where it listens: the service's `main.ts` for the end-to-end tests
 * and the load tools, the reference server, the KV Connect test server.
 *
 * ```ts
 * const server = await spawnServer({ env: { KV_PATH: "/tmp/x/intents.kv" } });
 * await fetch(`${server.url}/healthz`);
 * await server.stop();
 * ```
 * @module
 */

import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** This checkout's root folder. */
export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** What `main.ts` (and the reference server) print once they listen. */
const SERVICE_LISTENING = /listening on (http:\/\/\S+:\d+)/;

/** How long {@link SpawnedServer.stop} waits for the process to end before it kills it and throws. */
const STOP_BOUND_MS = 30_000;

/** The most of a process's stderr kept: its last half once this is passed. */
const STDERR_KEPT = 1 << 20;

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** The script, relative to `root` (or absolute); default `main.ts`. */
  script?: string;
  /** Arguments after the script. */
  args?: string[];
  /** The checkout it runs from: the working directory, whose deno.json applies; default this one. */
  root?: string;
  /** Deno's flags besides `-A`, before the script; default `["--quiet"]`. */
  flags?: string[];
  /** The Deno binary; default the one running this. */
  deno?: string;
  /**
   * A command that runs the server, followed by its arguments, e.g.
   * `["setpriv", "--inh-caps=-dac_override", "--"]`; default none.
   */
  wrapper?: string[];
  /** Environment variables besides this process's, over `PORT=0` and `HOSTNAME=127.0.0.1`. */
  env?: Record<string, string>;
  /** Pass none of this process's environment: only `env` (and `PORT`, `HOSTNAME`). */
  clearEnv?: boolean;
  /** Its stdout: kept for {@link SpawnedServer.stdout} (default), discarded, or shared with this process. */
  stdout?: "keep" | "discard" | "inherit";
  /** The line that says it listens: group 1 is its URL; default `main.ts`'s line. */
  listening?: RegExp;
  /** Where that line comes: stderr (default, as `main.ts` says it) or stdout (kept then). */
  listeningOn?: "stderr" | "stdout";
  /** How long it may take to listen; default 20 s. */
  timeoutMs?: number;
}

/** A running server process. */
export interface SpawnedServer {
  /** Where it listens, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  pid: number;
  /** What it wrote on stdout so far (empty unless kept). */
  stdout(): string;
  /** What it wrote on stderr so far (the last MiB). */
  stderr(): string;
  /** Its exit status, once it exits. */
  status: Promise<Deno.CommandStatus>;
  /**
   * Stops it (SIGTERM, or SIGKILL with `kill: true`) and waits until it exited.
   *
   * @throws {Error} when it was still running 30 s later (it is killed then).
   */
  stop(options?: { kill?: boolean }): Promise<void>;
  /**
   * Sends `signal` (default SIGTERM) and waits until it exited.
   *
   * @returns its exit code and the milliseconds from the signal to its exit.
   */
  terminate(signal?: Deno.Signal): Promise<{ code: number; ms: number }>;
}

/** `deno run -A <flags> <script> <args>` and where it runs, for {@link spawnServer} and one-shot runs. */
export function serverCommand(
  options: Pick<SpawnOptions, "script" | "args" | "root" | "flags">,
): { args: string[]; cwd: string } {
  const cwd = resolve(options.root ?? projectRoot);
  const script = options.script ?? "main.ts";
  return {
    args: [
      "run",
      "-A",
      ...(options.flags ?? ["--quiet"]),
      isAbsolute(script) ? script : join(cwd, script),
      ...(options.args ?? []),
    ],
    cwd,
  };
}

function kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // Already gone.
  }
}

/**
 * Spawns the server and waits until it listens.
 *
 * @throws {Error} when it exits or stays silent for `timeoutMs` before it
 * listens; its stderr is in the message, and the process is gone.
 */
export async function spawnServer(options: SpawnOptions = {}): Promise<SpawnedServer> {
  const { args, cwd } = serverCommand(options);
  const deno = options.deno ?? Deno.execPath();
  const [program, ...rest] = [...(options.wrapper ?? []), deno, ...args];
  const onStdout = options.listeningOn === "stdout";
  const stdoutMode = onStdout ? "keep" : options.stdout ?? "keep";
  const child = new Deno.Command(program, {
    args: rest,
    cwd,
    clearEnv: options.clearEnv,
    env: { PORT: "0", HOSTNAME: "127.0.0.1", ...options.env },
    stdout: stdoutMode === "keep" ? "piped" : stdoutMode === "discard" ? "null" : "inherit",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const listening = options.listening ?? SERVICE_LISTENING;
  const decoder = new TextDecoder();
  let out = "";
  let err = "";
  const found = Promise.withResolvers<string>();
  const outDone = stdoutMode !== "keep" ? Promise.resolve() : (async () => {
    for await (const chunk of child.stdout) {
      out += decoder.decode(chunk, { stream: true });
      const match = onStdout ? listening.exec(out) : null;
      if (match) found.resolve(match[1]);
    }
  })();
  const errDone = (async () => {
    for await (const chunk of child.stderr) {
      err += decoder.decode(chunk, { stream: true });
      const match = onStdout ? null : listening.exec(err);
      if (match) found.resolve(match[1]);
      // Drained to the end so the server never blocks on a full pipe.
      if (err.length > STDERR_KEPT) err = err.slice(-STDERR_KEPT / 2);
    }
  })();
  const status = child.status.then((s) => {
    found.reject(new Error(`the server exited with ${s.code} before listening: ${err.trim()}`));
    return s;
  });
  const timeoutMs = options.timeoutMs ?? 20_000;
  const timer = setTimeout(() => {
    found.reject(new Error(`the server did not listen within ${timeoutMs} ms: ${err.trim()}`));
  }, timeoutMs);
  let url: string;
  try {
    url = await found.promise;
  } catch (error) {
    kill(child, "SIGKILL");
    await status;
    await Promise.all([outDone, errDone]);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const exited = async () => {
    const s = await status;
    await Promise.all([outDone, errDone]);
    return s;
  };
  let stopped = false;
  /** Resolves true after `ms`, or false as soon as the server exits (no timer left behind). */
  const stillRunningAfter = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), ms);
      status.then(() => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  const resendUntilStopping = async () => {
    for (let tries = 0; tries < 20; tries++) {
      if (!(await stillRunningAfter(500)) || /: stopping/.test(err)) return;
      kill(child, "SIGTERM");
    }
  };
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    status,
    async stop({ kill: hard = false } = {}) {
      if (!stopped) {
        stopped = true;
        kill(child, hard ? "SIGKILL" : "SIGTERM");
        // A SIGTERM that comes while the server is still setting up its signal listeners is
        // lost (it has already said it listens): sent again until the server says it stops.
        if (!hard) void resendUntilStopping();
      }
      // A server that never ends would hold its test (and a whole run) forever.
      if (await stillRunningAfter(STOP_BOUND_MS)) {
        kill(child, "SIGKILL");
        await exited();
        throw new Error(`the server did not exit within ${STOP_BOUND_MS} ms: ${err.trim()}`);
      }
      await exited();
    },
    async terminate(signal: Deno.Signal = "SIGTERM") {
      stopped = true;
      const sent = performance.now();
      child.kill(signal);
      const { code } = await status;
      const ms = performance.now() - sent;
      await exited();
      return { code, ms };
    },
  };
}
