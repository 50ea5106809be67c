/**
 * Command-line client of the intent submission service: `deno task cli …`.
 *
 * Human output by default, `--json` for scripts (standard output then holds
 * exactly one JSON value). Exit codes: 0 success, 1 the service refused or
 * could not be reached, 2 a usage or local input error.
 * @module
 */

import { parseArgs } from "node:util";
import {
  fromKeyFile,
  generateEd25519Key,
  type Intent,
  type IntentEvent,
  type IntentRecord,
  IntentsClient,
  IntentsError,
  type Payload,
  signVariantA,
  signVariantB,
  toKeyFile,
} from "./mod.ts";
import { DEFAULT_URL, HELP } from "./cli_help.ts";

/** A usage or local input problem: exit code 2. */
class UsageError extends Error {
  override name = "UsageError";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const OPTIONS = {
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
} as const;

type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string;
};

/** Where the CLI writes; replaceable in tests of the CLI as a function. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<Uint8Array>;
  env(name: string): string | undefined;
  /** Aborted when the user interrupts (Ctrl-C). */
  interrupted?: AbortSignal;
}

const encoder = new TextEncoder();

const denoIo: CliIo = {
  stdout: (text) => writeAll(Deno.stdout, encoder.encode(text)),
  stderr: (text) => writeAll(Deno.stderr, encoder.encode(text)),
  readStdin: async () => new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer()),
  env: (name) => Deno.env.get(name),
};

function writeAll(target: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += target.writeSync(bytes.subarray(offset));
}

async function readInput(path: string, io: CliIo): Promise<Uint8Array> {
  if (path === "-") return await io.readStdin();
  try {
    return await Deno.readFile(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "no such file" : String(error);
    throw new UsageError(`cannot read ${path}: ${reason}`);
  }
}

function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not JSON: ${(error as Error).message}`);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function requireArg(value: string | undefined, name: string): string {
  if (value === undefined || value === "") throw new UsageError(`${name} is required`);
  return value;
}

function describeRecord(record: IntentRecord): string {
  const ref = record.variant === "A"
    ? `template ${record.template_id}`
    : `policy ${record.policy_id}`;
  const signers = record.authorship.signers.length > 0
    ? ` by ${record.authorship.signers.join(", ")}`
    : "";
  return `intent ${record.id} (variant ${record.variant}, ${ref})\n` +
    `  authorship: ${record.authorship.kind}${signers}\n` +
    `  received at: ${record.received_at}\n`;
}

interface Ctx {
  values: Values;
  args: string[];
  io: CliIo;
  client: () => IntentsClient;
  print: (human: string, json: unknown) => void;
  /** Aborted on Ctrl-C, so that a following command ends cleanly. */
  signal: AbortSignal;
}

async function keygen({ values, io, print }: Ctx): Promise<void> {
  const key = generateEd25519Key();
  const file = toKeyFile(key);
  if (!values.out) {
    io.stdout(`${JSON.stringify(file, null, 2)}\n`);
    return;
  }
  const text = `${JSON.stringify(file, null, 2)}\n`;
  try {
    // createNew refuses to replace a key someone may still need.
    await Deno.writeTextFile(values.out, text, { mode: 0o600, createNew: !values.force });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) {
      throw new UsageError(`${values.out} exists; pass --force to overwrite it`);
    }
    throw new UsageError(`cannot write ${values.out}: ${(error as Error).message}`);
  }
  print(`wrote ${values.out}\npublic key: ${file.public_key}\n`, {
    out: values.out,
    public_key: file.public_key,
  });
}

async function addDocument(kind: "template" | "policy", { values, args, io, client, print }: Ctx) {
  const path = requireArg(args[0], "FILE");
  const bytes = await readInput(path, io);
  const type = values["content-type"] ?? "application/json";
  const c = client();
  const { id, created } = kind === "template"
    ? await c.addTemplate(bytes, type)
    : await c.addPolicy(bytes, type);
  // The id alone on standard output, so that `ID=$(deno task cli template add FILE)` works.
  if (!values.json) console.error(`${created ? "stored" : "already stored"} ${kind}`);
  print(`${id}\n`, { id });
}

async function getDocument(kind: "template" | "policy", { args, client }: Ctx) {
  const id = requireArg(args[0], "ID");
  const c = client();
  const { bytes } = kind === "template" ? await c.getTemplate(id) : await c.getPolicy(id);
  writeAll(Deno.stdout, bytes);
}

async function readKey(path: string) {
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

async function sign({ values, io }: Ctx): Promise<void> {
  const keyPath = requireArg(values.key, "--key");
  let body: unknown;
  if (values.payload !== undefined) {
    if (values.template || values.policy || values.id || values.fields || values["fields-file"]) {
      throw new UsageError("--payload excludes --template, --policy, --id and --fields");
    }
    const text = new TextDecoder().decode(await readInput(values.payload, io));
    const value = parseJsonText(text, "--payload");
    if (!isPlainObject(value)) throw new UsageError("--payload must hold a JSON object");
    const key = await readKey(keyPath);
    if ("template_id" in value) body = signVariantA(value as unknown as Payload, key);
    else if ("policy_id" in value) body = signVariantB(value as unknown as Intent, key);
    else throw new UsageError("--payload needs template_id (Variant A) or policy_id (Variant B)");
  } else {
    if (Boolean(values.template) === Boolean(values.policy)) {
      throw new UsageError(
        "give exactly one of --template ID (Variant A) or --policy ID (Variant B)",
      );
    }
    if (values.fields !== undefined && values["fields-file"] !== undefined) {
      throw new UsageError("give --fields or --fields-file, not both");
    }
    let fields: unknown;
    if (values.fields !== undefined) fields = parseJsonText(values.fields, "--fields");
    if (values["fields-file"] !== undefined) {
      const bytes = await readInput(values["fields-file"], io);
      fields = parseJsonText(new TextDecoder().decode(bytes), "--fields-file");
    }
    if (fields !== undefined && !isPlainObject(fields)) {
      throw new UsageError("--fields must be a JSON object");
    }
    const key = await readKey(keyPath);
    const id = values.id ?? crypto.randomUUID();
    const attrs = fields === undefined ? {} : { attrs: { fields } };
    if (values.template) {
      body = signVariantA({ id, template_id: values.template, ...attrs }, key);
    } else {
      if (!UUID.test(id)) throw new UsageError("--id must be a UUID for Variant B (--policy)");
      body = signVariantB({ id, policy_id: values.policy!, ...attrs }, key);
    }
  }
  const text = `${JSON.stringify(body)}\n`;
  if (values.out) {
    await Deno.writeTextFile(values.out, text);
    io.stderr(`wrote ${values.out}\n`);
  } else {
    io.stdout(text);
  }
}

async function submit({ args, io, client, print }: Ctx): Promise<void> {
  const path = requireArg(args[0], "FILE");
  const bytes = await readInput(path, io);
  const record = await client().submit(bytes);
  print(`stored ${describeRecord(record)}`, record);
}

async function getIntent({ args, client, print }: Ctx): Promise<void> {
  const record = await client().getIntent(requireArg(args[0], "ID"));
  print(describeRecord(record), record);
}

async function list({ values, client, print }: Ctx): Promise<void> {
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^[0-9]+$/.test(values.limit) || limit < 1 || limit > 100) {
      throw new UsageError("--limit must be a whole number from 1 to 100");
    }
  }
  const page = await client().listIntents({ limit, cursor: values.cursor });
  const lines = page.items.map((r) =>
    `${r.received_at}  ${r.variant}  ${r.authorship.kind.padEnd(8)}  ${r.id}\n`
  );
  const more = page.cursor ? `next page: --cursor ${page.cursor}\n` : "";
  print(lines.length > 0 ? lines.join("") + more : "no intents\n", page);
}

function describeEvent(event: IntentEvent): string {
  const r = event.record;
  const ref = r.variant === "A" ? `template ${r.template_id}` : `policy ${r.policy_id}`;
  return `${event.id}  ${r.received_at}  ${event.type}  ${r.id}  ${r.variant} ${ref}  ` +
    `${r.authorship.kind}\n`;
}

async function events({ values, io, client, signal }: Ctx): Promise<void> {
  const feed = client().events({ after: values.after, follow: values.follow === true, signal });
  let count = 0;
  for await (const event of feed) {
    io.stdout(values.json ? `${JSON.stringify(event)}\n` : describeEvent(event));
    count++;
  }
  if (!values.json && !values.follow && count === 0) io.stderr("no events\n");
}

async function config(action: "get" | "set", { values, args, client, print }: Ctx) {
  const c = client();
  // "" is a valid URL argument here: it selects the default.
  if (action === "set" && args[0] === undefined) throw new UsageError("URL is required");
  const result = action === "get"
    ? await c.getConfig()
    : await c.setConfig(args[0], { ifMatch: values["if-match"] });
  print(
    `evidence_extractor_url: ${JSON.stringify(result.evidence_extractor_url)}\n` +
      `effective_url: ${result.effective_url}\n` +
      `updated_at: ${result.updated_at ?? "never"}\n` +
      `etag: ${result.etag}\n`,
    result,
  );
}

const COMMANDS: Record<string, (ctx: Ctx) => Promise<void>> = {
  keygen,
  "template add": (ctx) => addDocument("template", ctx),
  "template get": (ctx) => getDocument("template", ctx),
  "policy add": (ctx) => addDocument("policy", ctx),
  "policy get": (ctx) => getDocument("policy", ctx),
  sign,
  submit,
  get: getIntent,
  list,
  events,
  "config get": (ctx) => config("get", ctx),
  "config set": (ctx) => config("set", ctx),
};

const GROUPS = new Set(["template", "policy", "config"]);

/**
 * Runs the CLI.
 *
 * @param argv the arguments after `cli.ts`.
 * @returns the exit code.
 */
export async function runCli(argv: string[], io: CliIo = denoIo): Promise<number> {
  let json = argv.includes("--json");
  const fail = (message: string, code: string, exit: number) => {
    if (json) io.stdout(`${JSON.stringify({ message, code })}\n`);
    else io.stderr(`error: ${message}${code === "usage" ? "" : ` (${code})`}\n`);
    return exit;
  };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return fail(`${(error as Error).message}; see --help`, "usage", 2);
  }
  const values = parsed.values as Values;
  json = values.json === true;
  const positionals = [...parsed.positionals];
  let name = positionals.shift();
  if (name !== undefined && GROUPS.has(name)) {
    const sub = positionals.shift();
    if (sub === undefined) {
      io.stdout(`${HELP.main}\n`);
      return values.help ? 0 : 2;
    }
    name = `${name} ${sub}`;
  }
  if (name === undefined || name === "help") {
    io.stdout(`${HELP.main}\n`);
    return name === undefined && !values.help ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) return fail(`unknown command "${name}"; see --help`, "usage", 2);
  if (values.help) {
    io.stdout(`${HELP[name]}\n`);
    return 0;
  }
  const url = values.url ?? io.env("INTENTS_URL") ?? DEFAULT_URL;
  const token = values.token ??
    (name === "events" ? io.env("EVENTS_TOKEN") ?? io.env("ADMIN_TOKEN") : io.env("ADMIN_TOKEN"));
  const ctx: Ctx = {
    values,
    args: positionals,
    io,
    client: () => new IntentsClient({ url, token }),
    print: (human, value) => io.stdout(json ? `${JSON.stringify(value)}\n` : human),
    signal: io.interrupted ?? new AbortController().signal,
  };
  try {
    await command(ctx);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(error.message, "usage", 2);
    if (error instanceof IntentsError) return fail(error.message, error.code, 1);
    throw error;
  }
}

if (import.meta.main) {
  const interrupt = new AbortController();
  Deno.addSignalListener("SIGINT", () => interrupt.abort());
  Deno.exit(await runCli(Deno.args, { ...denoIo, interrupted: interrupt.signal }));
}
