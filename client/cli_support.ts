/**
 * What every command of the command-line client shares: its options, where
 * it reads and writes, and the local errors that exit with code 2.
 * @module
 */

import { type Ed25519Key, fromKeyFile, type IntentsClient } from "./mod.ts";
import { LOG_OPTIONS } from "./cli_log_help.ts";

/** A usage or local input problem: exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The options of every command; each command reads those its help names. */
export const OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  out: { type: "string" },
  force: { type: "boolean" },
  "content-type": { type: "string" },
  key: { type: "string" },
  template: { type: "string" },
  policy: { type: "string" },
  id: { type: "string" },
  fields: { type: "string" },
  "fields-file": { type: "string" },
  payload: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  "if-match": { type: "string" },
  after: { type: "string" },
  follow: { type: "boolean" },
  events: { type: "string" },
  description: { type: "string" },
  port: { type: "string" },
  secret: { type: "string" },
  overlap: { type: "string" },
  ...LOG_OPTIONS,
  "dry-run": { type: "boolean" },
} as const;

/** The parsed options. */
export type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K] extends { multiple: true } ? string[]
    : (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean
    : string;
};

/** Where the CLI writes; replaceable in tests of the CLI as a function. */
export interface CliIo {
  /** Writes to standard output. */
  stdout(text: string): void;
  /** Writes to standard error. */
  stderr(text: string): void;
  /** Reads standard input to its end. */
  readStdin(): Promise<Uint8Array>;
  /** An environment variable, or undefined when it is not set. */
  env(name: string): string | undefined;
  /** Aborted when the user interrupts (Ctrl-C). */
  interrupted?: AbortSignal;
}

const encoder = new TextEncoder();

/** The process's standard streams and environment. */
export const denoIo: CliIo = {
  stdout: (text) => writeAll(Deno.stdout, encoder.encode(text)),
  stderr: (text) => writeAll(Deno.stderr, encoder.encode(text)),
  readStdin: async () => new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer()),
  env: (name) => Deno.env.get(name),
};

export function writeAll(target: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += target.writeSync(bytes.subarray(offset));
}

export async function readInput(path: string, io: CliIo): Promise<Uint8Array> {
  if (path === "-") return await io.readStdin();
  try {
    return await Deno.readFile(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such file" : String(error);
    throw new UsageError(`cannot read ${path}: ${reason}`);
  }
}

export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not JSON: ${(error as Error).message}`);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function requireArg(value: string | undefined, name: string): string {
  if (value === undefined || value === "") throw new UsageError(`${name} is required`);
  return value;
}

/** What a command is given. */
export interface Ctx {
  values: Values;
  args: string[];
  io: CliIo;
  client: () => IntentsClient;
  print: (human: string, json: unknown) => void;
  /** Aborted on Ctrl-C, so that a following command ends cleanly. */
  signal: AbortSignal;
}

/** Reads an Ed25519 key file as `keygen` writes it. */
export async function readKey(path: string): Promise<Ed25519Key> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new UsageError(`cannot read key file ${path}: ${(error as Error).message}`);
  }
  try {
    return fromKeyFile(parseJsonText(text, `key file ${path}`));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
