/**
 * Measures webhook delivery to one healthy endpoint, from a server this tool
 * starts (`main.ts` on 127.0.0.1 with a temp KV file, plain HTTP and private
 * addresses allowed) to a receiver in this process that answers 204 at once.
 *
 * ```sh
 * deno task webhooks-load -- [--backlog 5000] [--rate 200] [--seconds 20] [--json]
 * ```
 *
 * Throughput: the endpoint is paused while `--backlog N` intents are stored
 * (64 submissions at a time, grouped into commits), then resumed; the figure
 * is N over the time from the resumption to the last delivery. Latency: the
 * endpoint caught up, `--rate R` submissions a second for `--seconds S`
 * (request i planned at start + i/R, at most 32 in flight), and, per intent,
 * its delivery's arrival minus its 201's: p50/p95/p99/max. Every event must
 * arrive, in the feed's order, or the tool exits 1.
 * @module
 */

import { parseArgs } from "node:util";
import { generateEd25519Key, IntentsClient, newIntentId, signVariantA } from "../../client/mod.ts";
import { commitOf, projectRoot, spawnLoadServer } from "../load/spawn.ts";

const USAGE = "usage: deno task webhooks-load -- [--backlog N] [--rate R] [--seconds S] [--json]";

function fail(message: string): never {
  console.error(`webhooks-load: ${message}`);
  Deno.exit(2);
}

function intOption(raw: string | undefined, name: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    fail(`--${name} must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
}

function readOptions(args: string[]) {
  if (args[0] === "--") args = args.slice(1);
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        backlog: { type: "string" },
        rate: { type: "string" },
        seconds: { type: "string" },
        json: { type: "boolean" },
      },
      strict: true,
    }));
  } catch (error) {
    fail(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  return {
    backlog: intOption(values.backlog, "backlog", 5_000, 1_000_000),
    rate: intOption(values.rate, "rate", 200, 10_000),
    seconds: intOption(values.seconds, "seconds", 20, 3_600),
    json: values.json === true,
  };
}

/** The receiver: when each event arrived, by event id, and which intent it carried. */
function receiver() {
  const arrived: { id: number; intent: string; at: number }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const body = await request.json();
    arrived.push({ id: Number(body.id), intent: body.record.id, at: performance.now() });
    return new Response(null, { status: 204 });
  });
  return { arrived, server, url: `http://127.0.0.1:${server.addr.port}/hook` };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs `count` jobs, at most `concurrency` at once. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await job(next++);
  }));
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (ms: number) => Math.round(ms * 100) / 100;

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const server = await spawnLoadServer({
    script: "main.ts",
    batchMax: 32,
    env: { WEBHOOKS_ALLOW_HTTP: "true", WEBHOOKS_ALLOW_PRIVATE: "true" },
  });
  const sink = receiver();
  try {
    const client = new IntentsClient({ url: server.url, token: server.token });
    const { id: template } = await client.addTemplate(JSON.stringify({ load: newIntentId() }));
    const key = generateEd25519Key();
    const submit = async () => {
      const record = await client.submit(
        signVariantA({ id: newIntentId(), template_id: template }, key),
      );
      return record.id;
    };
    const endpoint = await client.webhooks.add({ url: sink.url });
    await client.webhooks.pause(endpoint.id);

    // Throughput: a backlog, delivered from the resumption on.
    await pool(options.backlog, 64, async () => void await submit());
    const resumed = performance.now();
    await client.webhooks.resume(endpoint.id);
    await until(() => sink.arrived.length >= options.backlog, 600_000, "the backlog");
    const drained = sink.arrived[options.backlog - 1].at - resumed;
    const inOrder = sink.arrived.every((a, i) => a.id === i + 1);

    // Latency: 201 to delivery at a steady rate.
    const answered = new Map<string, number>();
    const total = options.rate * options.seconds;
    const started = performance.now();
    await pool(total, 32, async (i) => {
      const wait = started + (i * 1000) / options.rate - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      answered.set(await submit(), performance.now());
    });
    const achieved = total / ((performance.now() - started) / 1000);
    await until(() => sink.arrived.length >= options.backlog + total, 60_000, "the rate run");
    const delays = sink.arrived.slice(options.backlog)
      .map((a) => Math.max(0, a.at - answered.get(a.intent)!))
      .sort((a, b) => a - b);
    const allInOrder = inOrder && sink.arrived.every((a, i) => a.id === i + 1);
    const figures = {
      commit: await commitOf(projectRoot),
      backlog: options.backlog,
      backlog_seconds: round(drained / 1000),
      events_per_second: Math.round(options.backlog / (drained / 1000)),
      rate: options.rate,
      achieved_rate: Math.round(achieved),
      latency_events: delays.length,
      p50_ms: round(percentile(delays, 0.5)),
      p95_ms: round(percentile(delays, 0.95)),
      p99_ms: round(percentile(delays, 0.99)),
      max_ms: round(delays[delays.length - 1]),
      in_order: allInOrder,
      delivered: sink.arrived.length,
    };
    if (options.json) {
      console.log(JSON.stringify(figures));
    } else {
      console.log(
        `backlog of ${figures.backlog}: ${figures.events_per_second} events/s ` +
          `(${figures.backlog_seconds} s)\n` +
          `at ${figures.achieved_rate} submissions/s, 201 → delivery: p50 ${figures.p50_ms} ms, ` +
          `p95 ${figures.p95_ms} ms, p99 ${figures.p99_ms} ms, max ${figures.max_ms} ms\n` +
          `in the feed's order, none missing: ${figures.in_order}`,
      );
    }
    if (!allInOrder) Deno.exitCode = 1;
  } finally {
    await sink.server.shutdown();
    await server.stop();
  }
}

if (import.meta.main) await main();
