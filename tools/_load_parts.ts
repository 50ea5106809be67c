/**
 * The parts the measuring tools share: starting a server process on a temp KV
 * file, reading its memory and CPU from /proc, building signed bodies with the
 * client library, and driving a server over keep-alive HTTP/1.1 connections.
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { base58 } from "@scure/base";
import {
  type Ed25519Signature,
  type Intent,
  IntentsClient,
  multisigSignature,
  newIntentId,
  passkeySignature,
  type Payload,
  type Signature,
  signedBytes,
} from "../client/mod.ts";
import { SoftwarePasskey } from "../tests/support/authenticator.ts";
import { Http1Connection, postRequest } from "./_http1.ts";

/** This checkout's root folder. */
export const projectRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** A server a tool started: a script with a temp KV file. */
export interface Spawned {
  url: string;
  /** The admin token it was given. */
  token: string;
  pid: number;
  stop(): Promise<void>;
}

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** Script to run, relative to `root`. */
  script: string;
  /** `COMMIT_BATCH_MAX`. */
  batchMax: number;
  /** The checkout to run it from (its folder is the working directory); default: this one. */
  root?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /**
   * Start it as Deno Deploy does: no V8 flags, `DENO_DEPLOY=true`; default:
   * as `deno task start` does (a 2 MB young generation).
   */
  deploy?: boolean;
}

/**
 * Starts a server script on 127.0.0.1 (any free port) with a temp KV file and
 * waits until it listens.
 *
 * @throws {Error} when it exits or does not listen within 20 s.
 */
export async function spawnServer(options: SpawnOptions): Promise<Spawned> {
  const root = resolve(options.root ?? projectRoot);
  const dir = await Deno.makeTempDir({ prefix: "intents-load-" });
  const token = crypto.randomUUID().replaceAll("-", "");
  const child = new Deno.Command(Deno.execPath(), {
    // The same V8 flag as `deno task start`: a small young generation keeps RSS low.
    args: [
      "run",
      "-A",
      "--quiet",
      ...(options.deploy ? [] : ["--v8-flags=--max-semi-space-size=2"]),
      join(root, options.script),
    ],
    // Another checkout's own deno.json and lock file apply to it.
    cwd: root,
    env: {
      PORT: "0",
      HOSTNAME: "127.0.0.1",
      KV_PATH: join(dir, "intents.kv"),
      ADMIN_TOKEN: token,
      COMMIT_BATCH_MAX: String(options.batchMax),
      PASSKEY_ORIGINS: "http://localhost:8000",
      ...(options.deploy ? { DENO_DEPLOY: "true" } : {}),
      ...options.env,
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
  try {
    while (port === undefined) {
      if (Date.now() > deadline) throw new Error(`the server did not listen within 20 s: ${err}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server exited before listening: ${err}`);
      err += decoder.decode(value, { stream: true });
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(err);
      if (match) port = Number(match[1]);
    }
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
    await Deno.remove(dir, { recursive: true });
    throw error;
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

/** The short commit id of a checkout, for telling rounds apart; null outside git. */
export async function commitOf(dir: string): Promise<string | null> {
  try {
    const out = await new Deno.Command("git", {
      args: ["-C", dir, "rev-parse", "--short", "HEAD"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : null;
  } catch {
    return null;
  }
}

/**
 * Peak and current resident memory of a process, in bytes, from /proc (Linux;
 * Deno reads /proc only with all permissions, hence `deno run -A` in the task).
 */
export function readMemory(pid: number): { peak: number; current: number } | null {
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

/**
 * Resets a process's peak resident memory (VmHWM) to its current one, so that
 * the next peak read belongs to one phase of a run. False where Linux refuses.
 */
export function resetPeakMemory(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU time (user + system, all threads) a process has used, in seconds, from
 * /proc; null where it cannot be read. Linux counts it in ticks of 1/100 s.
 */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name may hold spaces; the fields after it are plain.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : null;
  } catch {
    return null;
  }
}

/** What {@link bodyBuilder} builds: the variant, the signature kind, the passkey origin. */
export interface BodySpec {
  variant: "A" | "B";
  kind: "ed25519" | "passkey" | "multisig";
  origin: string;
  /** The Ed25519 signer (`ed25519` kind); a new one when absent. */
  signer?: WebCryptoSigner;
  /** Variant B ids: random UUIDv4s (the default) or UUIDv7s, which grow with time. */
  ids?: "v4" | "v7";
}

/** One signed request body and the intent id it carries (as the server stores it). */
export interface Built {
  id: string;
  body: Uint8Array;
}

/** Ed25519 signer on Web Crypto: the native signer builds 100,000 bodies in seconds. */
export interface WebCryptoSigner {
  /** The public key, base58. */
  publicKey: string;
  sign(bytes: Uint8Array): Promise<Ed25519Signature>;
}

/** A new Ed25519 signer on Web Crypto. */
export async function webCryptoSigner(): Promise<WebCryptoSigner> {
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

/**
 * Posts a fresh template (Variant A) or policy (Variant B) and returns its id;
 * with `authorization`, a governed one (sent as JSON).
 */
export async function addReference(
  url: string,
  token: string,
  variant: "A" | "B",
  authorization?: { signers: Record<string, number>; threshold: number },
): Promise<string> {
  const admin = new IntentsClient({ url, token });
  const document = JSON.stringify({ load: true, nonce: crypto.randomUUID(), authorization });
  return variant === "A"
    ? (await admin.addTemplate(document)).id
    : (await admin.addPolicy(document)).id;
}

/**
 * Builds signed bodies of the chosen variant and kind, each with its intent
 * id; the signed bytes come from the client library.
 */
export async function bodyBuilder(
  spec: BodySpec,
  refId: string,
): Promise<(index: number) => Promise<Built>> {
  const encoder = new TextEncoder();
  const single = spec.signer ?? await webCryptoSigner();
  const trio = [single, await webCryptoSigner(), await webCryptoSigner()];
  const passkey = spec.kind === "passkey" ? await SoftwarePasskey.create() : undefined;
  const run = crypto.randomUUID().slice(0, 8);

  async function sign(value: Payload | Intent): Promise<Signature> {
    const bytes = signedBytes(value);
    if (spec.kind === "ed25519") return await single.sign(bytes);
    if (spec.kind === "multisig") {
      return multisigSignature({
        signers: Object.fromEntries(trio.map((s) => [s.publicKey, 1])),
        threshold: 3,
        signatures: await Promise.all(trio.map((s) => s.sign(bytes))),
      });
    }
    const body = await passkey!.assert(bytes, { origin: spec.origin });
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
    if (spec.variant === "A") {
      const payload: Payload = { id: `load-${run}-${index}`, template_id: refId, attrs };
      const body = JSON.stringify({ payload, signature: await sign(payload) });
      return { id: payload.id, body: encoder.encode(body) };
    }
    // Both are lower case, as the server stores UUID ids.
    const id = spec.ids === "v7" ? newIntentId() : crypto.randomUUID();
    const intent: Intent = { id, policy_id: refId, attrs };
    const body = JSON.stringify({ authorship: { Signed: await sign(intent) }, intent });
    return { id: intent.id, body: encoder.encode(body) };
  };
}

/** Builds bodies 0..total-1; returns them, their ids, and the seconds it took. */
export async function buildBodies(
  build: (index: number) => Promise<Built>,
  total: number,
): Promise<{ ids: string[]; bodies: Uint8Array[]; seconds: number }> {
  const started = performance.now();
  const ids: string[] = new Array(total);
  const bodies: Uint8Array[] = new Array(total);
  // Signing is asynchronous on Web Crypto: build in slices to keep memory and latency flat.
  for (let i = 0; i < total; i += 256) {
    const slice = await Promise.all(
      Array.from({ length: Math.min(256, total - i) }, (_, k) => build(i + k)),
    );
    for (let k = 0; k < slice.length; k++) {
      ids[i + k] = slice[k].id;
      bodies[i + k] = slice[k].body;
    }
  }
  return { ids, bodies, seconds: (performance.now() - started) / 1000 };
}

/** The p-th percentile (0–100) of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** p50, p95, p99 and max of sorted milliseconds, rounded. */
export function summary(
  sorted: Float64Array,
): { p50: number; p95: number; p99: number; max: number } {
  return {
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(percentile(sorted, 100)),
  };
}

/** Options of {@link drive}. */
export interface DriveOptions {
  url: string;
  bodies: Uint8Array[];
  /** Keep-alive connections, each with one request in flight at most. */
  concurrency: number;
  /** `performance.now()` after which nothing more is sent. */
  deadline: number;
  /**
   * Requests per second: request i is sent at the start plus i/rate, or as soon
   * as a connection is free after that. Its latency then counts from that
   * planned time, so a server that falls behind shows it. Absent: as fast as it goes.
   */
  rate?: number;
  /** Called as each answer has been read, with `performance.now()`. */
  onAnswer?: (index: number, status: number, at: number) => void;
}

/** Sends the bodies to `POST /intents`; returns latencies (ms) and counts by status. */
export async function drive(
  options: DriveOptions,
): Promise<{ latencies: Float64Array; statuses: Map<string, number>; seconds: number }> {
  const { bodies, concurrency, deadline, rate, onAnswer } = options;
  const latencies = new Float64Array(bodies.length);
  const statuses = new Map<string, number>();
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
  let next = 0;
  let done = 0;
  const target = new URL(options.url);
  const host = target.host;
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port || 80);
  const connections: Http1Connection[] = [];
  const started = performance.now();
  const worker = async () => {
    const connection = new Http1Connection(hostname, port);
    connections.push(connection);
    while (next < bodies.length && performance.now() < deadline) {
      const i = next++;
      let sent = performance.now();
      if (rate !== undefined) {
        const planned = started + (i * 1000) / rate;
        if (planned > sent) await new Promise((ok) => setTimeout(ok, planned - sent));
        sent = planned;
      }
      const request = postRequest(host, "/intents", bodies[i]);
      let status = 0;
      try {
        status = await connection.send(request);
        count(String(status));
      } catch {
        count("network error");
      }
      const at = performance.now();
      latencies[done++] = at - sent;
      onAnswer?.(i, status, at);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    for (const connection of connections) connection.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { latencies: latencies.slice(0, done).sort(), statuses, seconds };
}
