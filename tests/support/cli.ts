/**
 * Runs the command-line client as a process (`deno task cli …`), as a user or
 * a script would, for end-to-end tests.
 * @module
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
