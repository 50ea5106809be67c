/**
 * Load generator: builds N signed submissions with the client library, drives
 * a server on this host at a chosen concurrency over keep-alive HTTP/1.1
 * connections (a lean client of its own, so the generator takes little CPU),
 * and prints accepted/s, latency percentiles, answers by status and the
 * server's peak resident memory when it can read it.
 *
 * ```sh
 * deno task load -- --url http://127.0.0.1:8000 --token T --n 20000 --concurrency 64
 * deno task load -- --spawn --batch-max 32 --n 20000 --concurrency 64
 * ```
 *
 * Options: `--variant A|B` (default B), `--kind ed25519|passkey|multisig`
 * (default ed25519; multisig is three Ed25519 signers, threshold 3), `--pid P`
 * (read the server's memory from /proc), `--spawn` (start `main.ts` with a
 * temp KV file and `--batch-max` as `COMMIT_BATCH_MAX`, default 32; `--server S` spawns
 * another script instead, e.g. `tools/minimal_server.ts`), `--warmup W`
 * submissions sent first and left out of the figures (default 1000),
 * `--max-seconds S` (stop sending after S seconds, default 300), `--origin O`
 * (the passkey client data origin; default `http://localhost:8000`, which a
 * spawned server accepts), `--json` (print the figures as one JSON object).
 *
 * Only loopback addresses are accepted: this is a measuring tool, not a
 * stress tool for other hosts.
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { base58 } from "@scure/base";
import {
  type Ed25519Signature,
  type Intent,
  IntentsClient,
  multisigSignature,
  passkeySignature,
  type Payload,
  type Signature,
  signedBytes,
} from "../client/mod.ts";
import { SoftwarePasskey } from "../tests/support/authenticator.ts";
import { Http1Connection, postRequest } from "./_http1.ts";

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
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
  pid: number | undefined;
  spawn: boolean;
  batchMax: number;
  /** Script `--spawn` starts, relative to the project root. */
  server: string;
  warmup: number;
  maxSeconds: number;
  origin: string;
  json: boolean;
}

function fail(message: string): never {
  console.error(`load: ${message}`);
  Deno.exit(2);
}

function intOption(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) > max) fail(`--${name} must be a whole number ≤ ${max}`);
  return Number(raw);
}

const USAGE = "usage: deno task load -- (--url URL --token T | --spawn [--batch-max N] " +
  "[--server S]) [--n N] [--concurrency C] [--variant A|B] [--kind ed25519|passkey|multisig] " +
  "[--pid P] [--warmup W] [--max-seconds S] [--origin O] [--json]";

function readOptions(args: string[]): Options {
  // `deno task load -- …` hands the separator on.
  if (args[0] === "--") args = args.slice(1);
  let values;
  try {
    values = parseOptions(args);
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  return checkOptions(values);
}

function parseOptions(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      n: { type: "string" },
      concurrency: { type: "string" },
      variant: { type: "string" },
      kind: { type: "string" },
      pid: { type: "string" },
      spawn: { type: "boolean" },
      "batch-max": { type: "string" },
      server: { type: "string" },
      warmup: { type: "string" },
      "max-seconds": { type: "string" },
      origin: { type: "string" },
      json: { type: "boolean" },
    },
    strict: true,
  });
  return values;
}

function checkOptions(values: ReturnType<typeof parseOptions>): Options {
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
    pid: values.pid === undefined ? undefined : intOption(values.pid, "pid", 0, 2 ** 31),
    spawn: values.spawn ?? false,
    batchMax: intOption(values["batch-max"], "batch-max", 32, 99),
    server: values.server ?? "main.ts",
    warmup: intOption(values.warmup, "warmup", 1000, MAX_N),
    maxSeconds: intOption(values["max-seconds"], "max-seconds", 300, 3600),
    origin: values.origin ?? "http://localhost:8000",
    json: values.json ?? false,
  };
  if (options.n < 1 || options.concurrency < 1) fail("--n and --concurrency must be at least 1");
  if (options.spawn === (options.url !== undefined)) fail("give exactly one of --url and --spawn");
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

/** A server this tool started: `main.ts` with a temp KV file. */
interface Spawned {
  url: string;
  token: string;
  pid: number;
  stop(): Promise<void>;
}

async function spawnServer(script: string, batchMax: number): Promise<Spawned> {
  const dir = await Deno.makeTempDir({ prefix: "intents-load-" });
  const token = crypto.randomUUID().replaceAll("-", "");
  const child = new Deno.Command(Deno.execPath(), {
    // The same V8 flag as `deno task start`: a small young generation keeps RSS low.
    args: ["run", "-A", "--quiet", "--v8-flags=--max-semi-space-size=8", join(projectRoot, script)],
    cwd: projectRoot,
    env: {
      PORT: "0",
      HOSTNAME: "127.0.0.1",
      KV_PATH: join(dir, "intents.kv"),
      ADMIN_TOKEN: token,
      COMMIT_BATCH_MAX: String(batchMax),
      PASSKEY_ORIGINS: "http://localhost:8000",
    },
    // The request log is written as in production and discarded.
    stdout: "null",
    stderr: "piped",
    stdin: "null",
  }).spawn();
  const decoder = new TextDecoder();
  let err = "";
  const reader = child.stderr.getReader();
  const deadline = Date.now() + 20_000;
  let port: number | undefined;
  while (port === undefined) {
    if (Date.now() > deadline) fail(`the server did not listen within 20 s: ${err}`);
    const { value, done } = await reader.read();
    if (done) fail(`the server exited before listening: ${err}`);
    err += decoder.decode(value, { stream: true });
    const match = /listening on http:\/\/[^:]+:(\d+)/.exec(err);
    if (match) port = Number(match[1]);
  }
  // Keep draining stderr so the server never blocks on it.
  const drain = (async () => {
    while (!(await reader.read()).done) { /* discard */ }
  })();
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drain;
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * Peak and current resident memory of a process, in bytes, from /proc (Linux;
 * Deno reads /proc only with all permissions, hence `deno run -A` in the task).
 */
function readMemory(pid: number): { peak: number; current: number } | null {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const kb = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1]);
    const peak = kb("VmHWM");
    const current = kb("VmRSS");
    return Number.isFinite(peak) && Number.isFinite(current)
      ? { peak: peak * 1024, current: current * 1024 }
      : null;
  } catch {
    return null;
  }
}

/** Ed25519 signer on Web Crypto: the native signer builds 100,000 bodies in seconds. */
interface WebCryptoSigner {
  publicKey: string;
  sign(bytes: Uint8Array): Promise<Ed25519Signature>;
}

async function webCryptoSigner(): Promise<WebCryptoSigner> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = base58.encode(
    new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey)),
  );
  return {
    publicKey,
    async sign(bytes) {
      const signature = new Uint8Array(
        await crypto.subtle.sign("Ed25519", pair.privateKey, bytes as Uint8Array<ArrayBuffer>),
      );
      return { Ed25519: { pub_key: publicKey, signature: base58.encode(signature) } };
    },
  };
}

/** Builds signed bodies of the chosen variant and kind; the signed bytes come from the client library. */
async function bodyBuilder(
  options: Options,
  refId: string,
): Promise<(index: number) => Promise<Uint8Array>> {
  const encoder = new TextEncoder();
  const single = await webCryptoSigner();
  const trio = [single, await webCryptoSigner(), await webCryptoSigner()];
  const passkey = options.kind === "passkey" ? await SoftwarePasskey.create() : undefined;
  const run = crypto.randomUUID().slice(0, 8);

  async function sign(value: Payload | Intent): Promise<Signature> {
    const bytes = signedBytes(value);
    if (options.kind === "ed25519") return await single.sign(bytes);
    if (options.kind === "multisig") {
      return multisigSignature({
        signers: Object.fromEntries(trio.map((s) => [s.publicKey, 1])),
        threshold: 3,
        signatures: await Promise.all(trio.map((s) => s.sign(bytes))),
      });
    }
    const body = await passkey!.assert(bytes, { origin: options.origin });
    return passkeySignature({
      authenticatorData: base58.decode(body.authenticator_data),
      clientDataJSON: encoder.encode(body.client_data),
      signature: base58.decode(body.signature),
      publicKey: base58.decode(body.pub_key),
    });
  }

  return async (index) => {
    // A typical intent: a few business fields.
    const attrs = {
      fields: { amount: `${(index % 10_000) / 100}`, currency: "EUR", reference: `load-${index}` },
    };
    if (options.variant === "A") {
      const payload: Payload = { id: `load-${run}-${index}`, template_id: refId, attrs };
      return encoder.encode(JSON.stringify({ payload, signature: await sign(payload) }));
    }
    const intent: Intent = { id: crypto.randomUUID(), policy_id: refId, attrs };
    return encoder.encode(JSON.stringify({ authorship: { Signed: await sign(intent) }, intent }));
  };
}

/** The p-th percentile (0–100) of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Sends `bodies` from `concurrency` workers; returns latencies (ms) and counts by status. */
async function drive(
  url: string,
  bodies: Uint8Array[],
  concurrency: number,
  deadline: number,
): Promise<{ latencies: Float64Array; statuses: Map<string, number>; seconds: number }> {
  const latencies = new Float64Array(bodies.length);
  const statuses = new Map<string, number>();
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
  let next = 0;
  let done = 0;
  const target = new URL(url);
  const host = target.host;
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port || 80);
  const connections: Http1Connection[] = [];
  const worker = async () => {
    const connection = new Http1Connection(hostname, port);
    connections.push(connection);
    while (next < bodies.length && performance.now() < deadline) {
      const i = next++;
      const request = postRequest(host, "/intents", bodies[i]);
      const started = performance.now();
      try {
        count(String(await connection.send(request)));
      } catch {
        count("network error");
      }
      latencies[done++] = performance.now() - started;
    }
  };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    for (const connection of connections) connection.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { latencies: latencies.slice(0, done).sort(), statuses, seconds };
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const spawned = options.spawn ? await spawnServer(options.server, options.batchMax) : undefined;
  try {
    const url = (spawned?.url ?? options.url!).replace(/\/+$/, "");
    const token = spawned?.token ?? options.token!;
    const pid = spawned?.pid ?? options.pid;
    const admin = new IntentsClient({ url, token });
    const document = JSON.stringify({ load: true, nonce: crypto.randomUUID() });
    const refId = options.variant === "A"
      ? (await admin.addTemplate(document)).id
      : (await admin.addPolicy(document)).id;

    const build = await bodyBuilder(options, refId);
    const buildStarted = performance.now();
    const total = options.warmup + options.n;
    const all: Uint8Array[] = new Array(total);
    // Signing is asynchronous on Web Crypto: build in slices to keep memory and latency flat.
    for (let i = 0; i < total; i += 256) {
      const slice = await Promise.all(
        Array.from({ length: Math.min(256, total - i) }, (_, k) => build(i + k)),
      );
      for (let k = 0; k < slice.length; k++) all[i + k] = slice[k];
    }
    const buildSeconds = (performance.now() - buildStarted) / 1000;

    const deadline = performance.now() + options.maxSeconds * 1000;
    if (options.warmup > 0) {
      await drive(url, all.slice(0, options.warmup), options.concurrency, deadline);
    }
    const result = await drive(url, all.slice(options.warmup), options.concurrency, deadline);
    const memory = pid === undefined ? null : readMemory(pid);

    const accepted = result.statuses.get("201") ?? 0;
    const figures = {
      date: new Date().toISOString(),
      cpus: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      mode: spawned
        ? `spawned ${options.server}, COMMIT_BATCH_MAX=${options.batchMax}`
        : `running server at ${url}`,
      variant: options.variant,
      kind: options.kind,
      concurrency: options.concurrency,
      sent: result.latencies.length,
      warmup: options.warmup,
      build_seconds: Math.round(buildSeconds * 100) / 100,
      seconds: Math.round(result.seconds * 100) / 100,
      accepted_per_second: Math.round(accepted / result.seconds),
      latency_ms: {
        p50: Math.round(percentile(result.latencies, 50) * 100) / 100,
        p95: Math.round(percentile(result.latencies, 95) * 100) / 100,
        p99: Math.round(percentile(result.latencies, 99) * 100) / 100,
        max: Math.round(percentile(result.latencies, 100) * 100) / 100,
      },
      statuses: Object.fromEntries([...result.statuses].sort()),
      server_rss_mib: memory
        ? {
          peak: Math.round(memory.peak / 2 ** 20 * 10) / 10,
          current: Math.round(memory.current / 2 ** 20 * 10) / 10,
        }
        : null,
    };
    if (options.json) {
      console.log(JSON.stringify(figures));
    } else {
      const l = figures.latency_ms;
      console.log(
        [
          `${figures.date}  ${figures.cpus} CPUs  Deno ${figures.deno}  ${figures.mode}`,
          `variant ${figures.variant}, ${figures.kind}, concurrency ${figures.concurrency}, ` +
          `${figures.sent} sent after ${figures.warmup} warm-up (bodies built in ${figures.build_seconds} s)`,
          `accepted/s   ${figures.accepted_per_second}  (${accepted} in ${figures.seconds} s)`,
          `latency ms   p50 ${l.p50}  p95 ${l.p95}  p99 ${l.p99}  max ${l.max}`,
          `answers      ${
            Object.entries(figures.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")
          }`,
          `server RSS   ${
            figures.server_rss_mib
              ? `peak ${figures.server_rss_mib.peak} MiB, now ${figures.server_rss_mib.current} MiB`
              : "unknown (give --pid, or use --spawn)"
          }`,
        ].join("\n"),
      );
    }
  } finally {
    await spawned?.stop();
  }
}

if (import.meta.main) await main();
