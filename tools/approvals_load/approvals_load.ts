/**
 * Approvals under load: starts the server on a temp KV file and measures
 * `POST /intents/{id}/approvals`.
 *
 * ```sh
 * deno task approvals-load -- --hot --rounds 50        # 16 approvers on one intent at once
 * deno task approvals-load -- --spread --n 1000        # 1,000 pending intents, one approval each
 * ```
 *
 * `--hot`: a quorum of 16 Ed25519 signers, threshold 16; each round submits
 * one intent signed by the first (202 pending), then the other 15 approve it
 * all at once, so their commits conflict and retry; the last one accepts it.
 * `--spread`: a 2-of-2 quorum; N intents are submitted by the first signer,
 * then the second approves each, `--concurrency` at a time. Both print
 * approvals/s and the latency percentiles of the approvals; `--json` prints
 * one JSON object. `--batch-max` is the server's `COMMIT_BATCH_MAX`.
 * @module
 */

import { signedBytes } from "../../client/mod.ts";
import { addReference, type WebCryptoSigner, webCryptoSigner } from "../load/bodies.ts";
import { percentile, round } from "../load/figures.ts";
import { spawnLoadServer } from "../load/spawn.ts";
import { toolOptions } from "../options.ts";

const options = toolOptions("approvals-load");
// Typed, so that a call ends the flow where it fails.
const fail: (message: string) => never = options.fail;

const USAGE = "usage: deno task approvals-load -- (--hot | --spread) [--rounds R] [--n N] " +
  "[--concurrency C] [--batch-max B] [--json]";

function readOptions(args: string[]) {
  const values = options.parse(args, {
    hot: { type: "boolean" },
    spread: { type: "boolean" },
    rounds: { type: "string" },
    n: { type: "string" },
    concurrency: { type: "string" },
    "batch-max": { type: "string" },
    json: { type: "boolean" },
  }, USAGE);
  if (Boolean(values.hot) === Boolean(values.spread)) {
    fail("give exactly one of --hot and --spread");
  }
  return {
    mode: values.hot ? "hot" as const : "spread" as const,
    rounds: options.int(values.rounds, "rounds", 50, 10_000),
    n: options.int(values.n, "n", 1000, 100_000),
    concurrency: options.int(values.concurrency, "concurrency", 64, 1024),
    batchMax: options.int(values["batch-max"], "batch-max", 32, 99),
    json: values.json ?? false,
  };
}

type Json = Record<string, unknown>;

/** Posts JSON, returns the status and the parsed answer. */
async function post(http: Deno.HttpClient, url: string, body: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    client: http,
  });
  return { status: response.status, body: await response.json() as Json };
}

/** Submits an intent under `policy` signed by `signer`; it must come back pending. */
async function submitPending(
  http: Deno.HttpClient,
  url: string,
  policy: string,
  signer: WebCryptoSigner,
) {
  const intent = { id: crypto.randomUUID(), policy_id: policy };
  const bytes = signedBytes(intent);
  const answer = await post(http, `${url}/intents`, {
    authorship: { Signed: await signer.sign(bytes) },
    intent,
  });
  if (answer.status !== 202) fail(`a submission answered ${answer.status}, not 202 pending`);
  return { id: intent.id, bytes };
}

/** One approval, timed: the answer's state and the milliseconds it took. */
async function approve(
  http: Deno.HttpClient,
  url: string,
  id: string,
  signature: unknown,
): Promise<{ ms: number; state: string }> {
  const started = performance.now();
  const answer = await post(http, `${url}/intents/${id}/approvals`, { signature });
  const ms = performance.now() - started;
  if (answer.status !== 200) fail(`an approval answered ${answer.status}: ${answer.body.code}`);
  return { ms, state: String(answer.body.state) };
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const server = await spawnLoadServer({ script: "main.ts", batchMax: options.batchMax });
  const http = Deno.createHttpClient({});
  try {
    const size = options.mode === "hot" ? 16 : 2;
    const signers = await Promise.all(Array.from({ length: size }, () => webCryptoSigner()));
    const policy = await addReference(server.url, server.token, "B", {
      signers: Object.fromEntries(signers.map((s) => [s.publicKey, 1])),
      threshold: size,
    });
    const latencies: number[] = [];
    let seconds = 0;
    let accepted = 0;
    if (options.mode === "hot") {
      for (let r = 0; r < options.rounds; r++) {
        const { id, bytes } = await submitPending(http, server.url, policy, signers[0]);
        const signatures = await Promise.all(signers.slice(1).map((s) => s.sign(bytes)));
        const started = performance.now();
        const answers = await Promise.all(
          signatures.map((signature) => approve(http, server.url, id, signature)),
        );
        seconds += (performance.now() - started) / 1000;
        for (const a of answers) latencies.push(a.ms);
        const acceptances = answers.filter((a) => a.state === "accepted").length;
        if (acceptances !== 1) fail(`round ${r}: ${acceptances} approvals said accepted`);
        accepted++;
      }
    } else {
      const pending: { id: string; bytes: Uint8Array }[] = [];
      for (let i = 0; i < options.n; i += 64) {
        pending.push(
          ...await Promise.all(
            Array.from(
              { length: Math.min(64, options.n - i) },
              () => submitPending(http, server.url, policy, signers[0]),
            ),
          ),
        );
      }
      const signatures = await Promise.all(pending.map((p) => signers[1].sign(p.bytes)));
      let next = 0;
      const started = performance.now();
      await Promise.all(Array.from({ length: options.concurrency }, async () => {
        while (next < pending.length) {
          const i = next++;
          const answer = await approve(http, server.url, pending[i].id, signatures[i]);
          latencies.push(answer.ms);
          if (answer.state === "accepted") accepted++;
        }
      }));
      seconds = (performance.now() - started) / 1000;
    }
    const sorted = Float64Array.from(latencies).sort();
    const figures = {
      mode: options.mode,
      approvals: latencies.length,
      intents_accepted: accepted,
      seconds: round(seconds),
      approvals_per_second: Math.round(latencies.length / seconds),
      latency_ms: {
        p50: round(percentile(sorted, 50)),
        p95: round(percentile(sorted, 95)),
        p99: round(percentile(sorted, 99)),
        max: round(percentile(sorted, 100)),
      },
      cpus: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
    };
    if (options.json) {
      console.log(JSON.stringify(figures));
    } else {
      const l = figures.latency_ms;
      console.log(
        `${figures.mode}: ${figures.approvals} approvals in ${figures.seconds} s ` +
          `(${figures.approvals_per_second}/s), ${accepted} intents accepted\n` +
          `latency ms   p50 ${l.p50}  p95 ${l.p95}  p99 ${l.p99}  max ${l.max}`,
      );
    }
  } finally {
    http.close();
    await server.stop();
  }
}

if (import.meta.main) await main();
