/**
 * Runs the command-line client as a process (`deno task cli …`), as a user or
 * a script would, for end-to-end tests.
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, type TestServer } from "./server.ts";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** How one run ended. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno task cli ARGS` as a process, as a user or script would. */
export async function cli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string | Uint8Array; cwd?: string } = {},
): Promise<Run> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "cli", ...args],
    cwd: options.cwd ?? projectRoot,
    env: { NO_COLOR: "1", ...options.env },
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    const { stdin } = options;
    // Bytes as they are, for input that is not UTF-8 text.
    await writer.write(typeof stdin === "string" ? new TextEncoder().encode(stdin) : stdin);
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** The run's standard output as one JSON value; fails the test otherwise. */
export function parseJson(run: Run): Record<string, unknown> {
  try {
    return JSON.parse(run.stdout);
  } catch {
    assert.fail(`stdout is not one JSON value: ${JSON.stringify(run.stdout)}; ${run.stderr}`);
  }
}

/** A server process for a CLI test, a temp folder, and the environment that reaches it as admin. */
export interface CliEnv {
  server: TestServer;
  /** A temp folder for key files and bodies, removed afterwards. */
  dir: string;
  /** `INTENTS_URL` and `ADMIN_TOKEN` of the server. */
  env: Record<string, string>;
}

/** Runs `fn` with a fresh server process and temp folder; stops and removes both afterwards. */
export async function withCliServer(fn: (ctx: CliEnv) => Promise<void>): Promise<void> {
  const server = await startServer();
  const dir = await Deno.makeTempDir({ prefix: "intents-cli-" });
  try {
    await fn({ server, dir, env: { INTENTS_URL: server.url, ADMIN_TOKEN: server.adminToken } });
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Stores `text` as a JSON file with `template add` or `policy add --json`; returns its id. */
export async function addDocumentByCli(
  ctx: CliEnv,
  kind: "template" | "policy",
  text: string,
): Promise<string> {
  const file = join(ctx.dir, `${kind}-${crypto.randomUUID()}.json`);
  await Deno.writeTextFile(file, text);
  const run = await cli([kind, "add", file, "--json"], { env: ctx.env });
  assert.equal(run.code, 0, run.stderr);
  const body = parseJson(run);
  assert.deepEqual(Object.keys(body), ["id"]);
  return body.id as string;
}
