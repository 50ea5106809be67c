/**
 * Starts the real server process (`main.ts`) on a free port with its own KV
 * file, for end-to-end tests.
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** A running server process. */
export interface TestServer {
  url: string;
  port: number;
  adminToken: string;
  kvPath: string;
  /** The server process id (e.g. to read its memory use from /proc). */
  pid: number;
  /** Everything the process wrote to stdout so far (the request log). */
  stdout(): string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Stops the process (SIGTERM, or SIGKILL with `kill: true`) and waits for it. */
  stop(options?: { kill?: boolean }): Promise<void>;
  /**
   * Sends `signal` (default SIGTERM) and waits for the process to exit.
   *
   * @returns its exit code and the milliseconds from the signal to its exit.
   */
  terminate(signal?: Deno.Signal): Promise<{ code: number; ms: number }>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** KV file to use; default: a new temp file. */
  kvPath?: string;
  /**
   * A command that runs the server, followed by its arguments, e.g.
   * `["setpriv", "--inh-caps=-dac_override", "--"]`; default: none.
   */
  wrapper?: string[];
  /** The Deno binary that runs the server (see `denoBinary`); default: this one. */
  deno?: string;
  /**
   * Deno's flags besides `-A`, before `main.ts`; default `["--quiet"]`. Deno
   * Deploy passes none: `[]` starts the server as it does.
   */
  flags?: string[];
}

/** A fresh temp directory's KV file path. */
export async function tempKvPath(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "intents-test-" });
  return join(dir, "intents.kv");
}

/**
 * Starts `main.ts` as a separate process on a free port and waits until it
 * listens.
 */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const kvPath = options.kvPath ?? await tempKvPath();
  const adminToken = options.env?.ADMIN_TOKEN ?? "test-admin-token-0123456789";
  const flags = options.flags ?? ["--quiet"];
  const serverArgs = ["run", "-A", ...flags, join(projectRoot, "main.ts")];
  const deno = options.deno ?? Deno.execPath();
  const [program, ...args] = [...(options.wrapper ?? []), deno, ...serverArgs];
  const command = new Deno.Command(program, {
    args,
    cwd: projectRoot,
    env: {
      PORT: "0",
      HOSTNAME: "127.0.0.1",
      KV_PATH: kvPath,
      ADMIN_TOKEN: adminToken,
      // Verification on a worker thread, as on a machine of three CPUs or more;
      // the in-process suites cover the serving thread's own path.
      VERIFY_WORKERS: "1",
      ...options.env,
    },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  });
  const child = command.spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const outDone = (async () => {
    for await (const chunk of child.stdout) out += decoder.decode(chunk, { stream: true });
  })();
  let resolveListen!: (port: number) => void;
  let rejectListen!: (error: Error) => void;
  const listening = new Promise<number>((resolve, reject) => {
    resolveListen = resolve;
    rejectListen = reject;
  });
  const errDone = (async () => {
    for await (const chunk of child.stderr) {
      err += decoder.decode(chunk, { stream: true });
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(err);
      if (match) resolveListen(Number(match[1]));
    }
  })();
  const status = child.status.then((s) => {
    rejectListen(new Error(`server exited with ${s.code} before listening: ${err.trim()}`));
    return s;
  });
  const timer = setTimeout(
    () => rejectListen(new Error(`server did not listen within 20 s: ${err.trim()}`)),
    20_000,
  );
  let port: number;
  try {
    port = await listening;
  } finally {
    clearTimeout(timer);
  }
  let stopped = false;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    adminToken,
    kvPath,
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    async terminate(signal: Deno.Signal = "SIGTERM") {
      stopped = true;
      const sent = performance.now();
      child.kill(signal);
      const { code } = await status;
      const ms = performance.now() - sent;
      await outDone;
      await errDone;
      return { code, ms };
    },
    async stop({ kill = false } = {}) {
      if (!stopped) {
        stopped = true;
        try {
          child.kill(kill ? "SIGKILL" : "SIGTERM");
        } catch {
          // Already gone.
        }
      }
      await status;
      await outDone;
      await errDone;
    },
  };
}

/**
 * Runs `main.ts` with the given environment and returns how it exited, for
 * tests of boot-time refusals.
 */
export async function runServerExpectingExit(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const kvPath = await tempKvPath();
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", join(projectRoot, "main.ts")],
    cwd: projectRoot,
    env: { PORT: "0", HOSTNAME: "127.0.0.1", KV_PATH: kvPath, ...env },
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    signal: AbortSignal.timeout(20_000),
  }).output();
  return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
}
