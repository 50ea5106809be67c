/**
 * What one client address may cost: sends one kind of request from one
 * address (this host's loopback) at a steady pace to a server with the
 * default limits, its address bucket full at the start, and reports the
 * server's CPU time per second of the run (all its threads, from /proc) and
 * the answers by status. Every request is built beforehand, with fresh keys.
 *
 * ```sh
 * deno task abuse-load -- --kind all                     # every kind, each on a server of its own
 * deno task abuse-load -- --kind multisig16 --json       # one kind
 * deno task abuse-load -- --kind all --base ../baseline  # another checkout's main.ts
 * ```
 *
 * Options: `--kind K` (one of the kinds of `_kinds.ts`, or `all`), `--rate R`
 * requests a second (default 60), `--seconds S` (default 8), `--base DIR`
 * (spawn that checkout's `main.ts`), `--workers N` (the server's
 * `VERIFY_WORKERS`; default its own), `--json` (one JSON object per kind).
 * Each kind runs on a fresh server (a temp KV file, `RATE_LIMIT_*` and
 * `MAX_PENDING_PER_SIGNER` at their defaults) after five warm-up requests
 * of its kind and three seconds for the bucket to fill again (the wrong-token
 * kind has no warm-up: its budget takes a minute to refill).
 * @module
 */

import { resolve } from "node:path";
import { addReference } from "../load/bodies.ts";
import { round } from "../load/figures.ts";
import { commitOf, projectRoot, spawnLoadServer } from "../load/spawn.ts";
import { readCpuSeconds } from "../../testing/proc_stats.ts";
import { type Kind, KINDS, prepare, type Prepared } from "./_kinds.ts";
import { toolOptions } from "../options.ts";

const options = toolOptions("abuse-load");
// Typed, so that a call ends the flow where it fails.
const fail: (message: string) => never = options.fail;

const USAGE = `usage: deno task abuse-load -- --kind (${
  Object.keys(KINDS).join("|")
}|all) [--rate R] [--seconds S] [--base DIR] [--workers N] [--json]`;

function readOptions(args: string[]) {
  const values = options.parse(args, {
    kind: { type: "string" },
    rate: { type: "string" },
    seconds: { type: "string" },
    base: { type: "string" },
    workers: { type: "string" },
    json: { type: "boolean" },
  }, USAGE);
  const int = (raw: string | undefined, fallback: number, max: number, name: string) => {
    if (raw === undefined) return fallback;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
      fail(`--${name} must be a whole number from 1 to ${max}`);
    }
    return Number(raw);
  };
  const kind = values.kind;
  if (kind !== "all" && !(kind !== undefined && kind in KINDS)) fail(USAGE);
  if (values.workers !== undefined && !/^[0-8]$/.test(values.workers)) {
    fail("--workers must be a whole number from 0 to 8");
  }
  return {
    kinds: kind === "all" ? Object.keys(KINDS) as Kind[] : [kind as Kind],
    rate: int(values.rate, 60, 1000, "rate"),
    seconds: int(values.seconds, 8, 600, "seconds"),
    base: values.base === undefined ? projectRoot : resolve(values.base),
    workers: values.workers,
    json: values.json ?? false,
  };
}

type Options = ReturnType<typeof readOptions>;

/** The figures of one kind's run. */
interface Figures {
  kind: Kind;
  sent: number;
  seconds: number;
  statuses: Record<string, number>;
  server_cpu_seconds: number | null;
  server_cpu_per_second: number | null;
}

function send(url: string, request: Prepared): Promise<number> {
  return fetch(`${url}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body as BodyInit | undefined,
  }).then(async (response) => {
    await response.body?.cancel();
    return response.status;
  }, () => 0);
}

/** Sends `requests` at `rate` a second, each on time whatever the answers; their statuses. */
async function paced(url: string, requests: Prepared[], rate: number): Promise<number[]> {
  const started = performance.now();
  const answers: Promise<number>[] = [];
  for (let i = 0; i < requests.length; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    answers.push(send(url, requests[i]));
  }
  return await Promise.all(answers);
}

async function runKind(kind: Kind, options: Options): Promise<Figures> {
  const server = await spawnLoadServer({
    script: "main.ts",
    batchMax: 32,
    root: options.base,
    env: {
      // The limits as a server started with none of them set has them.
      RATE_LIMIT_PER_ADDRESS: "",
      RATE_LIMIT_PER_SIGNER: "",
      RATE_LIMIT_AUTH_FAILURES: "",
      MAX_PENDING_PER_SIGNER: "",
      ...(options.workers === undefined ? {} : { VERIFY_WORKERS: options.workers }),
    },
  });
  try {
    const policyId = await addReference(server.url, server.token, "B");
    const ctx = { policyId, origin: "http://localhost:8000" };
    const count = options.rate * options.seconds;
    const warmup = kind === "wrong-token" ? 0 : 5;
    const requests: Prepared[] = [];
    for (let i = 0; i < warmup + count; i++) requests.push(await prepare(kind, i, ctx));
    for (const request of requests.slice(0, warmup)) await send(server.url, request);
    // A full bucket at the start: it fills in two seconds.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const cpuBefore = readCpuSeconds(server.pid);
    const started = performance.now();
    const statuses = await paced(server.url, requests.slice(warmup), options.rate);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = readCpuSeconds(server.pid);
    const counted: Record<string, number> = {};
    for (const status of statuses) counted[status] = (counted[status] ?? 0) + 1;
    const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    return {
      kind,
      sent: statuses.length,
      seconds: round(seconds),
      statuses: counted,
      server_cpu_seconds: cpu === null ? null : round(cpu),
      server_cpu_per_second: cpu === null ? null : round(cpu / seconds, 3),
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const commit = await commitOf(options.base);
  const results: Figures[] = [];
  for (const kind of options.kinds) {
    const figures = await runKind(kind, options);
    results.push(figures);
    if (options.json) {
      console.log(JSON.stringify({
        date: new Date().toISOString(),
        commit,
        rate: options.rate,
        ...figures,
      }));
    }
  }
  if (options.json) return;
  const ordinary = results.find((r) => r.kind === "ordinary")?.server_cpu_per_second ?? null;
  console.log(
    `${
      new Date().toISOString()
    }  ${navigator.hardwareConcurrency} CPUs  Deno ${Deno.version.deno}` +
      `  ${options.base === projectRoot ? "this checkout" : options.base}` +
      `${commit ? ` (${commit})` : ""}, ${options.rate}/s for ${options.seconds} s`,
  );
  console.log("| what the address sends | answers | server CPU per second | against ordinary |");
  console.log("| --- | --- | --- | --- |");
  for (const r of results) {
    const answers = Object.entries(r.statuses).map(([k, v]) => `${v} × ${k}`).join(", ");
    const cpu = r.server_cpu_per_second;
    const ratio = cpu !== null && ordinary ? `${(cpu / ordinary).toFixed(1)}x` : "";
    console.log(`| ${KINDS[r.kind]} | ${answers} | ${cpu ?? "?"} s | ${ratio} |`);
  }
}

if (import.meta.main) await main();
