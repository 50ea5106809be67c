/**
 * Command-line client of the intent submission service: `deno task cli …`.
 *
 * Human output by default, `--json` for scripts (standard output then holds
 * exactly one JSON value). Exit codes: 0 success, 1 the service refused or
 * could not be reached, 2 a usage or local input error, 3 the log did not
 * verify (the `log` commands).
 * @module
 */

import { parseArgs } from "node:util";
import {
  appliedRules,
  generateEd25519Key,
  type Intent,
  IntentsClient,
  IntentsError,
  LogVerificationError,
  newIntentId,
  type Payload,
  signVariantA,
  signVariantB,
  toKeyFile,
} from "./mod.ts";
import { UUID_PATTERN } from "@intents/protocol/intent_id";
import { DEFAULT_URL, HELP } from "./cli_help.ts";
import { WEBHOOK_COMMANDS } from "./cli_webhooks.ts";
import { WEBHOOK_HELP } from "./cli_webhooks_help.ts";
import { LOG_COMMANDS } from "./cli_log.ts";
import { LOG_HELP } from "./cli_log_help.ts";
import { documentMediaType } from "./cli_media_type.ts";
import {
  approveHint,
  describeApprovals,
  describeApproved,
  describeEvent,
  describeRecord,
  describeRejected,
  weightText,
} from "./cli_format.ts";
import {
  type CliIo,
  type Ctx,
  denoIo,
  isPlainObject,
  OPTIONS,
  parseJsonText,
  readInput,
  readKey,
  requireArg,
  UsageError,
  type Values,
  writeAll,
} from "./cli_support.ts";

export type { CliIo };

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
  const type = values["content-type"] ?? documentMediaType(path, bytes);
  const c = client();
  const { id, created } = kind === "template"
    ? await c.addTemplate(bytes, type)
    : await c.addPolicy(bytes, type);
  // The id alone on standard output, so that `ID=$(deno task cli template add FILE)` works.
  // The type is named only when new: bytes stored before keep the type they were first sent with.
  if (!values.json) console.error(created ? `stored ${kind} as ${type}` : `already stored ${kind}`);
  print(`${id}\n`, { id });
}

async function getDocument(kind: "template" | "policy", { args, client }: Ctx) {
  const id = requireArg(args[0], "ID");
  const c = client();
  const { bytes } = kind === "template" ? await c.getTemplate(id) : await c.getPolicy(id);
  writeAll(Deno.stdout, bytes);
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
    const id = values.id ?? newIntentId();
    const attrs = fields === undefined ? {} : { attrs: { fields } };
    if (values.template) {
      body = signVariantA({ id, template_id: values.template, ...attrs }, key);
    } else {
      if (!UUID_PATTERN.test(id)) {
        throw new UsageError("--id must be a UUID for Variant B (--policy)");
      }
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

async function submit({ args, io, client, print, values }: Ctx): Promise<void> {
  const path = requireArg(args[0], "FILE");
  const bytes = await readInput(path, io);
  if (values["dry-run"]) {
    // Checked as a submission, stored nowhere: what the intent would become.
    const tried = await client().dryRun(bytes);
    const rules = tried.rules.length > 0 ? `, rules ${tried.rules.join(", ")} true` : "";
    const quorum = tried.approval ? ` (${weightText(tried.approval)}${rules})` : "";
    print(`would be ${tried.outcome}${quorum}; nothing stored`, tried);
    return;
  }
  const { record, outcome } = await client().submitOutcome(bytes);
  if (outcome === "replayed") {
    // 200: this same submission was stored before (a retry); the record is that intent as it is now.
    print(`already stored: the same intent, ${describeRecord(record)}`, record);
    return;
  }
  if (record.state === "pending" && record.approval) {
    // 202: stored, waiting for the other signers.
    const head = `pending (${weightText(record.approval)}): `;
    print(`${head}${describeRecord(record)}${approveHint(record.id)}`, record);
    return;
  }
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

async function events({ values, io, client, signal }: Ctx): Promise<void> {
  const feed = client().events({ after: values.after, follow: values.follow === true, signal });
  let count = 0;
  for await (const event of feed) {
    io.stdout(values.json ? `${JSON.stringify(event)}\n` : describeEvent(event));
    count++;
  }
  if (!values.json && !values.follow && count === 0) io.stderr("no events\n");
}

async function approvals({ values, args, client, print }: Ctx): Promise<void> {
  const service = client();
  const view = await service.approvals(requireArg(args[0], "ID"));
  if (view.state !== "pending") return print(describeApprovals(view), view);
  // Under rules, what the true rules say, from the document (public); JSON prints the view only.
  const applied = values.json ? null : await appliedRules(service, view);
  print(describeApprovals(view, applied) + approveHint(view.id), view);
}

async function approve({ values, args, client, print }: Ctx): Promise<void> {
  const id = requireArg(args[0], "ID");
  const key = await readKey(requireArg(values.key, "--key"));
  const view = await client().approve(id, key);
  print(describeApproved(view), view);
}

async function reject({ values, args, client, print }: Ctx): Promise<void> {
  const id = requireArg(args[0], "ID");
  const key = await readKey(requireArg(values.key, "--key"));
  const view = await client().reject(id, key);
  print(describeRejected(view), view);
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
  approvals,
  approve,
  reject,
  "config get": (ctx) => config("get", ctx),
  "config set": (ctx) => config("set", ctx),
  ...WEBHOOK_COMMANDS,
  ...LOG_COMMANDS,
};

const GROUPS = new Set(["template", "policy", "config", "webhooks", "log"]);
const GROUP_HELP: Record<string, string> = { webhooks: WEBHOOK_HELP.webhooks, log: LOG_HELP.log };

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
      io.stdout(`${GROUP_HELP[name] ?? HELP.main}\n`);
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
    io.stdout(`${HELP[name] ?? WEBHOOK_HELP[name] ?? LOG_HELP[name]}\n`);
    return 0;
  }
  const url = values.url ?? io.env("INTENTS_URL") ?? DEFAULT_URL;
  const token = values.token ??
    (name === "events" || name.startsWith("log ")
      ? io.env("EVENTS_TOKEN") ?? io.env("ADMIN_TOKEN")
      : io.env("ADMIN_TOKEN"));
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
    if (error instanceof LogVerificationError) return fail(error.message, error.code, 3);
    throw error;
  }
}

if (import.meta.main) {
  const interrupt = new AbortController();
  Deno.addSignalListener("SIGINT", () => interrupt.abort());
  Deno.exit(await runCli(Deno.args, { ...denoIo, interrupted: interrupt.signal }));
}
