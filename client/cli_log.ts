/**
 * The `log` commands of the command-line client (docs/interface.md §14,
 * "Clients"): a log key, the checkpoint, an entry's proof written beside its
 * entry, the offline check of a proof, the audit of the feed, and the
 * monitor. Each check is the client library's; a check that fails is a
 * `LogVerificationError` (exit 3).
 * @module
 */

import { base64 } from "@scure/base";
import { parseCosignerKey } from "@intents/protocol/log/cosignature";
import { generateNoteKey, parseVerifierKey } from "@intents/protocol/log/note";
import {
  auditLog,
  type Checkpoint,
  type CheckpointPolicy,
  checkTlogProof,
  type Cosigned,
  entryBytes,
  type IntentEvent,
  type IntentRecord,
  leafHash,
  LogVerificationError,
  Monitor,
  type MonitorRound,
  type VerifiedCheckpoint,
} from "./mod.ts";
import {
  type Ctx,
  isPlainObject,
  parseJsonText,
  readInput,
  requireArg,
  UsageError,
} from "./cli_support.ts";

/** How long `log prove` waits for the checkpoint to cover an entry. */
const PROVE_WAIT_MS = 10_000;

/** A key given as its text, or as a file holding it. */
async function keyText(value: string, parse: (key: string) => unknown, what: string) {
  for (const candidate of [value, await Deno.readTextFile(value).then((t) => t.trim(), () => "")]) {
    try {
      if (candidate !== "") {
        parse(candidate);
        return candidate;
      }
    } catch {
      // Not a key: try it as a file.
    }
  }
  throw new UsageError(`${what} must be a verifier key <name>+<key id>+<base64>, or a file of one`);
}

/** The trust policy of --key, --witness and --quorum. */
async function policyOf({ values }: Ctx): Promise<CheckpointPolicy> {
  const logKey = await keyText(requireArg(values.key, "--key"), parseVerifierKey, "--key");
  const witnesses: string[] = [];
  for (const w of values.witness ?? []) {
    witnesses.push(await keyText(w, parseCosignerKey, "--witness"));
  }
  let quorum = witnesses.length;
  if (values.quorum !== undefined) {
    quorum = Number(values.quorum);
    if (!/^[0-9]{1,2}$/.test(values.quorum) || quorum > witnesses.length) {
      throw new UsageError(`--quorum must be a whole number from 0 to ${witnesses.length}`);
    }
  }
  return { logKey, witnesses, quorum, nowS: Math.floor(Date.now() / 1000) };
}

/** What a verified checkpoint says, on one line. */
function describeCheckpoint(
  { checkpoint, cosigned }: { checkpoint: Checkpoint; cosigned: Cosigned[] },
): string {
  const witnesses = cosigned.length === 0
    ? ""
    : `, cosigned by ${cosigned.map((c) => c.name).join(", ")}`;
  const entries = checkpoint.size === 1 ? "entry" : "entries";
  return `${checkpoint.origin}: ${checkpoint.size} ${entries}, root ${
    base64.encode(checkpoint.rootHash)
  }${witnesses}`;
}

function checkpointJson(verified: VerifiedCheckpoint | MonitorRound) {
  const { origin, size, rootHash } = verified.checkpoint;
  return { origin, size, root_hash: base64.encode(rootHash), cosigned: verified.cosigned };
}

function keygen({ values, print }: Ctx): Promise<void> {
  const name = requireArg(values.name, "--name");
  let keys;
  try {
    keys = generateNoteKey(name);
  } catch {
    throw new UsageError("--name must be a non-empty name without spaces or '+'");
  }
  print(`${keys.signerKey}\n${keys.verifierKey}\n`, {
    signer_key: keys.signerKey,
    verifier_key: keys.verifierKey,
  });
  return Promise.resolve();
}

async function checkpoint(ctx: Ctx): Promise<void> {
  const { values, client, print, signal } = ctx;
  if (values.key === undefined) {
    const note = await client().log.checkpointNote(signal);
    print(note, { checkpoint: note, verified: false });
    return;
  }
  const verified = await client().log.checkpoint(await policyOf(ctx), signal);
  print(`${verified.note}\nverified: ${describeCheckpoint(verified)}\n`, {
    checkpoint: verified.note,
    verified: true,
    ...checkpointJson(verified),
  });
}

/** The entry of an intent's record (201 or 202) or of a feed event, and the files' base name. */
async function entryOf(ctx: Ctx): Promise<{ entry: Uint8Array; base: string }> {
  const { values, args, client, signal } = ctx;
  if (values.record !== undefined) {
    if (args[0] !== undefined) throw new UsageError("give an event ID or --record FILE, not both");
    const bytes = await readInput(values.record, ctx.io);
    const value = parseJsonText(new TextDecoder().decode(bytes), "--record");
    if (!isPlainObject(value)) throw new UsageError("--record must hold a JSON object");
    const base = values.record === "-" ? "record" : values.record.replace(/\.json$/i, "");
    if (typeof value.type === "string" && isPlainObject(value.record)) {
      return { entry: entryBytes(value.type, value.record), base };
    }
    const type = (value as unknown as IntentRecord).state === "pending"
      ? "intent.pending"
      : "intent.accepted";
    return { entry: entryBytes(type, value), base };
  }
  const id = requireArg(args[0], "an event ID or --record FILE");
  if (!/^[1-9][0-9]{0,15}$/.test(id)) throw new UsageError("ID must be an event id (1, 2, …)");
  const after = id === "1" ? undefined : String(BigInt(id) - 1n);
  let event: IntentEvent | undefined;
  for await (const e of client().events({ after, follow: false, limit: 1, signal })) {
    event = e;
    break;
  }
  if (event?.id !== id) throw new UsageError(`the feed holds no event ${id}`);
  return { entry: entryBytes(event.type, event.record), base: `event-${id}` };
}

async function prove(ctx: Ctx): Promise<void> {
  const { values, client, print, signal } = ctx;
  const policy = values.key === undefined ? null : await policyOf(ctx);
  const { entry, base } = await entryOf(ctx);
  const log = client().log;
  let proof: string;
  let index: number | undefined;
  if (policy === null) {
    proof = await log.proof({ leaf: leafHash(entry) }, { waitMs: PROVE_WAIT_MS, signal });
  } else {
    const verified = await log.proveEntry(entry, policy, { waitMs: PROVE_WAIT_MS, signal });
    proof = verified.proof;
    index = verified.verdict.index;
  }
  const proofPath = values.out ?? `${base}.tlog-proof`;
  const entryPath = `${proofPath.replace(/\.tlog-proof$/, "")}.entry`;
  await Deno.writeFile(entryPath, entry);
  await Deno.writeTextFile(proofPath, proof);
  const checked = index === undefined
    ? " (not checked: give --key)"
    : ` (index ${index}, verified)`;
  print(`wrote ${proofPath} and ${entryPath}${checked}\n`, {
    proof: proofPath,
    entry: entryPath,
    verified: index !== undefined,
    ...(index === undefined ? {} : { index }),
  });
}

async function verify(ctx: Ctx): Promise<void> {
  const { values, args, io, print } = ctx;
  const proofPath = requireArg(args[0], "PROOF");
  const entryPath = requireArg(values.entry, "--entry");
  const policy = await policyOf(ctx);
  const proof = await readInput(proofPath, io);
  const entry = await readInput(entryPath, io);
  const verdict = checkTlogProof({ ...policy, proof, entry });
  const { origin, size, rootHash } = verdict.checkpoint;
  print(
    `verified: entry ${verdict.index} of ${describeCheckpoint(verdict)}\n`,
    { verified: true, index: verdict.index, origin, size, root_hash: base64.encode(rootHash) },
  );
}

async function audit(ctx: Ctx): Promise<void> {
  const result = await auditLog(ctx.client(), await policyOf(ctx), ctx.signal);
  ctx.print(
    `audited ${result.entries} entries from the feed: they make the checkpoint's root\n` +
      `verified: ${describeCheckpoint(result)}\n`,
    { verified: true, entries: result.entries, ...checkpointJson(result) },
  );
}

function describeRound(round: MonitorRound): string {
  const change = round.change === "first"
    ? "trusted from now on"
    : round.change === "same"
    ? "unchanged"
    : `extends the ${round.previousSize} trusted`;
  return `${describeCheckpoint(round)}: ${change}\n`;
}

async function watch(ctx: Ctx): Promise<void> {
  const { values, io, print, signal } = ctx;
  const stateFile = requireArg(values.state, "--state");
  let intervalMs = 10_000;
  if (values.interval !== undefined) {
    intervalMs = Number(values.interval) * 1000;
    if (!/^[0-9]{1,5}$/.test(values.interval) || intervalMs === 0) {
      throw new UsageError("--interval must be a whole number of seconds from 1 to 99999");
    }
  }
  const monitor = new Monitor({ ...await policyOf(ctx), log: ctx.client().log, stateFile });
  const onRound = (round: MonitorRound) =>
    print(describeRound(round), {
      change: round.change,
      previous_size: round.previousSize,
      ...checkpointJson(round),
    });
  try {
    if (values.once) onRound(await monitor.check(signal));
    else {
      await monitor.watch({
        intervalMs,
        signal,
        onRound,
        onError: (error) => io.stderr(`cannot read the log: ${error.message} (${error.code})\n`),
      });
    }
  } catch (error) {
    if (error instanceof LogVerificationError && error.evidence && !values.json) {
      io.stderr(
        `the log did not verify; keep these signed checkpoints as evidence.\n` +
          `trusted (${stateFile}):\n${error.evidence.trusted}\nserved:\n${error.evidence.served}\n`,
      );
    }
    throw error;
  }
}

/** The `log` commands by name. */
export const LOG_COMMANDS: Record<string, (ctx: Ctx) => Promise<void>> = {
  "log keygen": keygen,
  "log checkpoint": checkpoint,
  "log prove": prove,
  "log verify": verify,
  "log audit": audit,
  "log watch": watch,
};
