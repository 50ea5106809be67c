/**
 * Load generator: builds N signed submissions with the client library, drives
 * a server on this host at a chosen concurrency over keep-alive HTTP/1.1
 * connections (a lean client of its own, so the generator takes little CPU),
 * and prints accepted/s, latency percentiles, answers by status, and the
 * server's peak resident memory and CPU time (all its threads) per accepted
 * intent when it can read them.
 *
 * ```sh
 * deno task load -- --url http://127.0.0.1:8000 --token T --n 20000 --concurrency 64
 * deno task load -- --spawn --batch-max 32 --n 20000 --concurrency 64
 * deno task load -- --instances 4 --kv-delay-ms 25 --n 6000 --concurrency 256
 * ```
 *
 * Options: `--variant A|B` (default B), `--kind ed25519|passkey|multisig`
 * (default ed25519; multisig is three Ed25519 signers, threshold 3),
 * `--ids v7` (Variant B intent ids that grow with time, UUIDv7, instead of
 * random UUIDv4s), `--governed` (the template or policy is governed, its one signer the load's
 * Ed25519 key with weight = threshold, so every intent is accepted at once), `--rules` (governed, and
 * the document carries 16 rules of about 1,000 characters, all true, that keep its quorum:
 * `rules.ts`), `--pid P`
 * (read the server's memory from /proc), `--spawn` (start `main.ts` with a
 * temp KV file and `--batch-max` as `COMMIT_BATCH_MAX`, default 64; `--kv-connect` gives it
 * a KV Connect server of its own instead of the file, see `testing/kv_connect/`; `--deploy` starts
 * it as Deno Deploy does (no V8 flags, `DENO_DEPLOY=true`); `--server S` spawns
 * another script instead, e.g. `tools/load/minimal_server.ts`; `--base DIR` runs
 * the script of another checkout of the project, from that folder, to compare
 * commits), `--warmup W`
 * submissions sent first and left out of the figures (default 1000),
 * `--max-seconds S` (stop sending after S seconds, default 300), `--origin O`
 * (the passkey client data origin; default `http://localhost:8000`, which a
 * spawned server accepts), `--webhooks N` (before the run, N webhook endpoints,
 * at most 100, of type `intent.expired` only, which this load never makes: each
 * endpoint's deliverer follows the feed and moves past every event, and the
 * figures say what that costs the serving path; they point at a receiver in
 * this tool, and a spawned server is given `WEBHOOKS_ALLOW_HTTP` and
 * `WEBHOOKS_ALLOW_PRIVATE`), `--otel` (a spawned server runs with telemetry on,
 * `OTEL_DENO=true`, exporting OTLP (Deno's default, http/protobuf) to a receiver in this tool that reads
 * and drops every export; the figures say how many bytes it got), `--instances N` (scale mode,
 * `scale.ts`: N servers started as Deno Deploy starts them on one KV Connect server, behind a link
 * of `--kv-delay-ms D` each way; the load split evenly over them, and how long intents take to
 * reach the feed), `--log-coverage` (also how long after its 201 each accepted intent is covered by
 * a served signed checkpoint, `coverage.ts`), `--json` (print the figures as one JSON object).
 *
 * Only loopback addresses are accepted: this is a measuring tool, not a
 * stress tool for other hosts.
 * @module
 */

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { addReference, bodyBuilder, buildBodies, webCryptoSigner } from "./bodies.ts";
import { drive } from "./drive.ts";
import { loadRules } from "./rules.ts";
import { round, summary } from "./figures.ts";
import { commitOf, projectRoot, type Spawned, spawnLoadServer } from "./spawn.ts";
import { runScale, scaleLines, startRig, warmUp } from "./scale.ts";
import { readCpuSeconds, readMemory } from "../../testing/proc_stats.ts";
import {
  type StartedKvConnectServer,
  startKvConnectServer,
} from "../../testing/kv_connect/start.ts";
import { addIdleEndpoints, idleReceiver, otlpSink } from "./receivers.ts";
import { coverageLine, startCoverage } from "./coverage.ts";
import { type OptionSpec, type OptionValues, toolOptions } from "../options.ts";

const options = toolOptions("load");
// Typed, so that a call ends the flow where it fails.
const fail: (message: string) => never = options.fail;
/** Whole numbers from 0 (`--warmup 0`, `--webhooks 0`); the checks of the options say more. */
const intOption = (raw: string | undefined, name: string, fallback: number, max: number) =>
  options.int(raw, name, fallback, max, 0);

const MAX_N = 1_000_000;
const MAX_CONCURRENCY = 1024;

/** Parsed command line. */
interface Options {
  url: string | undefined;
  token: string | undefined;
  n: number;
  concurrency: number;
  variant: "A" | "B";
  kind: "ed25519" | "passkey" | "multisig";
  /** Submit under a governed document whose one signer (weight = threshold) is the load's key. */
  governed: boolean;
  /** The governed document carries the sixteen rules of `rules.ts`, all true. */
  rules: boolean;
  /** How intent ids are made: random (UUIDv4, the default) or growing with time (UUIDv7). */
  ids: "v4" | "v7";
  pid: number | undefined;
  spawn: boolean;
  batchMax: number;
  /** Script `--spawn` starts, relative to `base`. */
  server: string;
  /** The checkout `--spawn` runs the server from (this one unless `--base`). */
  base: string;
  /** `--spawn` keeps its data in a KV Connect server started for it, not a file. */
  kvConnect: boolean;
  /** `--spawn` starts the server as Deno Deploy does. */
  deploy: boolean;
  warmup: number;
  maxSeconds: number;
  origin: string;
  /** Idle webhook endpoints made before the run. */
  webhooks: number;
  /** `--spawn` starts the server with telemetry on, exporting to a receiver of this tool's. */
  otel: boolean;
  /** Scale mode: this many instances on one KV Connect server (0: off). */
  instances: number;
  /** Scale mode: the KV Connect link's delay each way. */
  kvDelayMs: number;
  /** Also measure how long after its 201 each intent is covered by a checkpoint. */
  logCoverage: boolean;
  json: boolean;
}

const USAGE = "usage: deno task load -- (--url URL --token T | --spawn [--batch-max N] " +
  "[--server S] [--base DIR] [--kv-connect] [--deploy] [--otel] | --instances N [--kv-delay-ms D] " +
  "[--batch-max N] [--base DIR]) [--n N] [--concurrency C] [--variant A|B] [--kind ed25519|passkey|multisig] " +
  "[--governed | --rules] [--ids v4|v7] [--pid P] [--warmup W] [--max-seconds S] [--origin O] " +
  "[--webhooks N] [--log-coverage] [--json]";

/** The options of the command line. */
const LOAD_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  n: { type: "string" },
  concurrency: { type: "string" },
  variant: { type: "string" },
  kind: { type: "string" },
  governed: { type: "boolean" },
  rules: { type: "boolean" },
  ids: { type: "string" },
  pid: { type: "string" },
  spawn: { type: "boolean" },
  "batch-max": { type: "string" },
  server: { type: "string" },
  base: { type: "string" },
  "kv-connect": { type: "boolean" },
  deploy: { type: "boolean" },
  warmup: { type: "string" },
  "max-seconds": { type: "string" },
  origin: { type: "string" },
  webhooks: { type: "string" },
  otel: { type: "boolean" },
  instances: { type: "string" },
  "kv-delay-ms": { type: "string" },
  "log-coverage": { type: "boolean" },
  json: { type: "boolean" },
} satisfies OptionSpec;

function readOptions(args: string[]): Options {
  return checkOptions(options.parse(args, LOAD_OPTIONS, USAGE));
}

function checkOptions(values: OptionValues<typeof LOAD_OPTIONS>): Options {
  const variant = values.variant ?? "B";
  if (variant !== "A" && variant !== "B") fail("--variant must be A or B");
  const kind = values.kind ?? "ed25519";
  if (kind !== "ed25519" && kind !== "passkey" && kind !== "multisig") {
    fail("--kind must be ed25519, passkey or multisig");
  }
  const options: Options = {
    url: values.url,
    token: values.token,
    n: intOption(values.n, "n", 20_000, MAX_N),
    concurrency: intOption(values.concurrency, "concurrency", 64, MAX_CONCURRENCY),
    variant,
    kind,
    governed: (values.governed || values.rules) ?? false,
    rules: values.rules ?? false,
    ids: values.ids === "v7" ? "v7" : "v4",
    pid: values.pid === undefined ? undefined : intOption(values.pid, "pid", 0, 2 ** 31),
    spawn: values.spawn ?? false,
    batchMax: intOption(values["batch-max"], "batch-max", 64, 99),
    server: values.server ?? "main.ts",
    base: values.base === undefined ? projectRoot : resolve(values.base),
    kvConnect: values["kv-connect"] ?? false,
    deploy: values.deploy ?? false,
    warmup: intOption(values.warmup, "warmup", 1000, MAX_N),
    maxSeconds: intOption(values["max-seconds"], "max-seconds", 300, 3600),
    origin: values.origin ?? "http://localhost:8000",
    webhooks: intOption(values.webhooks, "webhooks", 0, 100),
    otel: values.otel ?? false,
    instances: intOption(values.instances, "instances", 0, 16),
    kvDelayMs: intOption(values["kv-delay-ms"], "kv-delay-ms", 0, 1000),
    logCoverage: values["log-coverage"] ?? false,
    json: values.json ?? false,
  };
  if (options.instances > 0) {
    // Scale mode spawns its servers itself, on a KV Connect server of its own.
    if (options.url !== undefined || options.spawn || options.kvConnect || options.webhooks > 0) {
      fail("--instances spawns its own servers: no --url, --spawn, --kv-connect or --webhooks");
    }
    return options;
  }
  if (values["kv-delay-ms"] !== undefined) fail("--kv-delay-ms goes with --instances");
  if (options.n < 1 || options.concurrency < 1) fail("--n and --concurrency must be at least 1");
  if (options.spawn === (options.url !== undefined)) fail("give exactly one of --url and --spawn");
  if (values.base !== undefined && !options.spawn) fail("--base needs --spawn");
  if ((options.kvConnect || options.deploy || options.otel) && !options.spawn) {
    fail("--kv-connect, --deploy and --otel need --spawn");
  }
  if (options.governed && kind !== "ed25519") fail("--governed and --rules go with --kind ed25519");
  if (values.ids !== undefined && values.ids !== "v4" && values.ids !== "v7") {
    fail("--ids must be v4 or v7");
  }
  if (options.spawn && !existsSync(join(options.base, options.server))) {
    fail(`there is no ${options.server} in ${options.base}`);
  }
  if (options.url !== undefined) {
    if (!options.token) fail("--token is needed with --url (templates and policies are admin)");
    let host: string;
    try {
      host = new URL(options.url).hostname;
    } catch {
      fail("--url is not a URL");
    }
    if (!["127.0.0.1", "localhost", "[::1]"].includes(host)) {
      fail("--url must be a loopback address (127.0.0.1, localhost or [::1])");
    }
  }
  return options;
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  if (options.instances > 0) return await mainScale(options);
  let spawned: Spawned | undefined;
  let kvConnect: StartedKvConnectServer | undefined;
  const otlp = options.otel ? otlpSink() : undefined;
  try {
    kvConnect = options.kvConnect ? await startKvConnectServer() : undefined;
    spawned = options.spawn
      ? await spawnLoadServer({
        script: options.server,
        batchMax: options.batchMax,
        root: options.base,
        env: {
          ...(kvConnect && { KV_PATH: kvConnect.url, DENO_KV_ACCESS_TOKEN: kvConnect.token }),
          ...(options.webhooks > 0 && {
            WEBHOOKS_ALLOW_HTTP: "true",
            WEBHOOKS_ALLOW_PRIVATE: "true",
          }),
          ...(otlp && {
            OTEL_DENO: "true",
            OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          }),
        },
        deploy: options.deploy,
      })
      : undefined;
  } catch (error) {
    await kvConnect?.close();
    await otlp?.close();
    fail(error instanceof Error ? error.message : String(error));
  }
  const receiver = options.webhooks > 0 ? idleReceiver() : undefined;
  try {
    const url = (spawned?.url ?? options.url!).replace(/\/+$/, "");
    const token = spawned?.token ?? options.token!;
    if (receiver) {
      await addIdleEndpoints(url, token, options.webhooks, receiver.url).catch((error) =>
        fail(error.message)
      );
    }
    const pid = spawned?.pid ?? options.pid;
    const signer = await webCryptoSigner();
    const refId = await addReference(
      url,
      token,
      options.variant,
      options.governed
        ? {
          signers: { [signer.publicKey]: 1 },
          threshold: 1,
          ...(options.rules && { rules: loadRules(signer.publicKey) }),
        }
        : undefined,
    );
    const total = options.warmup + options.n;
    const built = await buildBodies(await bodyBuilder({ ...options, signer }, refId), total);

    const deadline = performance.now() + options.maxSeconds * 1000;
    const { concurrency } = options;
    if (options.warmup > 0) {
      await drive({ url, bodies: built.bodies.slice(0, options.warmup), concurrency, deadline });
    }
    const coverage = options.logCoverage ? startCoverage([{ url, token }]) : undefined;
    await coverage?.ready();
    const ids = built.ids.slice(options.warmup);
    const cpuBefore = pid === undefined ? null : readCpuSeconds(pid);
    const result = await drive({
      url,
      bodies: built.bodies.slice(options.warmup),
      concurrency,
      deadline,
      onAnswer: coverage && ((i, status, at) => coverage.answered(ids[i], status, at)),
    });
    const memory = pid === undefined ? null : readMemory(pid);
    const cpuAfter = pid === undefined ? null : readCpuSeconds(pid);

    const accepted = result.statuses.get("201") ?? 0;
    const logCoverage = await coverage?.finish() ?? null;
    const figures = {
      date: new Date().toISOString(),
      cpus: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      mode: spawned
        ? `spawned ${options.server}${
          options.base === projectRoot ? "" : ` of ${options.base}`
        }, COMMIT_BATCH_MAX=${options.batchMax}${options.kvConnect ? ", KV Connect" : ""}${
          options.deploy ? ", as Deno Deploy starts it" : ""
        }${options.otel ? ", telemetry on (OTLP)" : ""}`
        : `running server at ${url}`,
      commit: spawned ? await commitOf(options.base) : null,
      variant: options.variant,
      kind: options.kind,
      governed: options.governed,
      rules: options.rules,
      ids: options.ids,
      concurrency: options.concurrency,
      sent: result.latencies.length,
      warmup: options.warmup,
      build_seconds: round(built.seconds),
      seconds: round(result.seconds),
      accepted_per_second: Math.round(accepted / result.seconds),
      latency_ms: summary(result.latencies),
      statuses: Object.fromEntries([...result.statuses].sort()),
      webhooks: options.webhooks,
      webhook_deliveries: receiver?.received() ?? 0,
      /** Bytes of OTLP exports received so far (with `--otel`). */
      telemetry_bytes: otlp?.bytes() ?? null,
      server_cpu_us_per_accepted: cpuBefore !== null && cpuAfter !== null && accepted > 0
        ? Math.round(((cpuAfter - cpuBefore) * 1e6) / accepted)
        : null,
      server_rss_mib: memory
        ? {
          peak: round(memory.peak / 2 ** 20, 1),
          current: round(memory.current / 2 ** 20, 1),
        }
        : null,
      log_coverage_ms: logCoverage,
    };
    if (options.json) {
      console.log(JSON.stringify(figures));
    } else {
      const l = figures.latency_ms;
      console.log(
        [
          `${figures.date}  ${figures.cpus} CPUs  Deno ${figures.deno}  ${figures.mode}${
            figures.commit ? ` (${figures.commit})` : ""
          }`,
          `variant ${figures.variant}, ${figures.kind}, concurrency ${figures.concurrency}, ` +
          `${figures.sent} sent after ${figures.warmup} warm-up (bodies built in ${figures.build_seconds} s)`,
          `accepted/s   ${figures.accepted_per_second}  (${accepted} in ${figures.seconds} s)`,
          `latency ms   p50 ${l.p50}  p95 ${l.p95}  p99 ${l.p99}  max ${l.max}`,
          `answers      ${
            Object.entries(figures.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")
          }`,
          ...(figures.webhooks > 0
            ? [
              `webhooks     ${figures.webhooks} idle endpoints, ` +
              `${figures.webhook_deliveries} deliveries received`,
            ]
            : []),
          `server RSS   ${
            figures.server_rss_mib
              ? `peak ${figures.server_rss_mib.peak} MiB, now ${figures.server_rss_mib.current} MiB`
              : "unknown (give --pid, or use --spawn)"
          }`,
          ...(figures.server_cpu_us_per_accepted === null
            ? []
            : [`server CPU   ${figures.server_cpu_us_per_accepted} µs per accepted intent`]),
          ...(logCoverage === null ? [] : [coverageLine(logCoverage)]),
        ].join("\n"),
      );
    }
  } finally {
    await spawned?.stop();
    await kvConnect?.close();
    await receiver?.close();
    await otlp?.close();
  }
}

/** Scale mode: N instances on one KV Connect server behind a delaying link (`scale.ts`). */
async function mainScale(options: Options): Promise<void> {
  let rig;
  try {
    rig = await startRig({ ...options, root: options.base });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  try {
    const [first] = rig.servers;
    const signer = await webCryptoSigner();
    const refId = await addReference(first.url, first.token, options.variant);
    const total = options.warmup + options.n;
    const built = await buildBodies(await bodyBuilder({ ...options, signer }, refId), total);
    const deadline = performance.now() + options.maxSeconds * 1000;
    await warmUp(rig, built.bodies.slice(0, options.warmup), options.concurrency, deadline);
    const figures = {
      date: new Date().toISOString(),
      cpus: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      commit: await commitOf(options.base),
      variant: options.variant,
      kind: options.kind,
      commit_batch_max: options.batchMax,
      sent: options.n,
      warmup: options.warmup,
      ...await runScale(rig, {
        ...options,
        root: options.base,
        ids: built.ids.slice(options.warmup),
        bodies: built.bodies.slice(options.warmup),
        deadline,
      }),
    };
    if (options.json) console.log(JSON.stringify(figures));
    else {
      console.log(
        [
          `${figures.date}  ${figures.cpus} CPUs  Deno ${figures.deno}  main.ts as Deno Deploy ` +
          `starts it, COMMIT_BATCH_MAX=${options.batchMax}` +
          (figures.commit ? ` (${figures.commit})` : ""),
          `variant ${figures.variant}, ${figures.kind}, ${figures.sent} sent after ` +
          `${figures.warmup} warm-up`,
          ...scaleLines(figures),
        ].join("\n"),
      );
    }
  } finally {
    await rig.close();
  }
}

if (import.meta.main) await main();
