/**
 * The log's independent verifier, `testing/log_go` (README.md there): built
 * with Go from Debian's golang-golang-x-mod-dev sources in GOPATH mode, so
 * that it needs no module proxy, then run on what the log's modules wrote.
 *
 * Without Go (or without the x/mod sources) its tests are ignored, unless
 * `CI` is set (then they fail).
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where Debian's golang-golang-x-mod-dev puts its sources. */
const GOPATH = "/usr/share/gocode";
const SOURCE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "testing", "log_go");

const GO_FOUND = await found("go", ["version"]);
const X_MOD_FOUND = await Deno.stat(`${GOPATH}/src/golang.org/x/mod/sumdb/note/note.go`)
  .then(() => true, () => false);

/**
 * Whether the Go verifier's tests run: where Go and the x/mod sources are
 * found, and always with `CI` set, where a missing one fails them.
 */
export const HAS_GO: boolean = (GO_FOUND && X_MOD_FOUND) || Boolean(Deno.env.get("CI"));
if (!HAS_GO) {
  console.warn(
    "Go log verifier tests ignored: go or golang.org/x/mod not found (apt-get install golang-go golang-golang-x-mod-dev)",
  );
}

/**
 * Whether `command` runs and succeeds. `Command.output` throws at once,
 * rather than rejecting, when the program is not found.
 */
async function found(command: string, args: string[]): Promise<boolean> {
  try {
    const output = await new Deno.Command(command, { args, stdout: "null", stderr: "null" })
      .output();
    return output.success;
  } catch {
    return false;
  }
}

/** Go's environment for an offline GOPATH build. */
function goEnv(): Record<string, string> {
  return { GOPATH, GO111MODULE: "off", GOFLAGS: "", GOTOOLCHAIN: "local", GOPROXY: "off" };
}

/**
 * Builds the verifier into a new temporary directory.
 *
 * @returns the program's path; the caller removes its directory.
 * @throws {Error} with Go's message when the build fails.
 */
export async function buildGoVerifier(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "log-go-" });
  const program = join(dir, "log_go");
  const { success, stderr } = await new Deno.Command("go", {
    args: ["build", "-o", program, "."],
    cwd: SOURCE,
    env: goEnv(),
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!success) throw new Error(`go build: ${new TextDecoder().decode(stderr)}`);
  return program;
}

/** What `log_go check` answered. */
export interface GoVerdict {
  ok: boolean;
  /** Its standard output (a JSON line when ok). */
  out: string;
  /** Every failed check, one a line. */
  err: string;
}

/** Runs `log_go check` with `input` as JSON on its standard input. */
export async function runGoVerifier(program: string, input: unknown): Promise<GoVerdict> {
  const child = new Deno.Command(program, {
    args: ["check"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(input)));
  await writer.close();
  const { success, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { ok: success, out: decoder.decode(stdout), err: decoder.decode(stderr) };
}

/** A running `log_go witness`: its add-checkpoint URL prefix, and how to stop it. */
export interface GoWitness {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts `log_go witness` on a free loopback port, cosigning checkpoints of
 * the log of `logKey` with the cosigner signer key `witnessKey`.
 */
export async function startGoWitness(
  program: string,
  options: { logKey: string; witnessKey: string },
): Promise<GoWitness> {
  const child = new Deno.Command(program, {
    args: ["witness", "127.0.0.1:0", options.logKey],
    env: { WITNESS_KEY: options.witnessKey },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("log_go witness ended before it listened");
    seen += value;
  }
  const url = /^listening on (http:\/\/\S+)$/m.exec(seen)?.[1];
  if (url === undefined) throw new Error(`log_go witness: ${seen}`);
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await reader.cancel().catch(() => {});
      await child.status;
    },
  };
}
