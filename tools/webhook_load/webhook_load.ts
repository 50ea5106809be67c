/**
 * Measures webhook delivery to one healthy endpoint, from a server this tool
 * starts (`main.ts` on 127.0.0.1 with a temp KV file, plain HTTP and private
 * addresses allowed) to a receiver in this process that answers 204 at once.
 *
 * ```sh
 * deno task webhooks-load -- [--backlog 5000] [--rate 200] [--seconds 20] [--https] [--json]
 * ```
 *
 * With `--https` the receiver speaks TLS with a certificate for `localhost`
 * from a throwaway authority the server trusts through `DENO_CERT`; it is a
 * Node process (`_https_receiver.mjs`, `node` on PATH), because Node's https
 * server sets TCP_NODELAY as production servers do, and Deno.serve's TLS
 * connections do not (a fresh connection's answer would then wait for a
 * delayed ACK, 40 ms, on most deliveries, and the tool would measure that).
 * Times are epoch milliseconds (`performance.timeOrigin + performance.now()`)
 * in both processes.
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

import { join } from "node:path";
import { generateEd25519Key, IntentsClient, newIntentId, signVariantA } from "../../client/mod.ts";
import { commitOf, projectRoot, spawnLoadServer } from "../load/spawn.ts";
import { makeCertificates, type TestCertificates } from "../../testing/certificates.ts";
import { toolOptions } from "../options.ts";

const options = toolOptions("webhooks-load");
const intOption = options.int;

const USAGE =
  "usage: deno task webhooks-load -- [--backlog N] [--rate R] [--seconds S] [--https] [--json]";

function readOptions(args: string[]) {
  const values = options.parse(args, {
    backlog: { type: "string" },
    rate: { type: "string" },
    seconds: { type: "string" },
    https: { type: "boolean" },
    json: { type: "boolean" },
  }, USAGE);
  return {
    backlog: intOption(values.backlog, "backlog", 5_000, 1_000_000),
    rate: intOption(values.rate, "rate", 200, 10_000),
    seconds: intOption(values.seconds, "seconds", 20, 3_600),
    https: values.https === true,
    json: values.json === true,
  };
}

/** When each event arrived, by event id, and which intent it carried. */
interface Arrival {
  id: number;
  intent: string;
  at: number;
}

/** High-resolution epoch milliseconds, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

/** A plain HTTP receiver in this process, answering 204 at once. */
function httpReceiver() {
  const arrived: Arrival[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const body = await request.json();
    arrived.push({ id: Number(body.id), intent: body.record.id, at: now() });
    return new Response(null, { status: 204 });
  });
  return {
    arrived,
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    close: () => server.shutdown(),
  };
}

/** The HTTPS receiver: a Node process (see the module documentation), its lines read here. */
async function httpsReceiver(tls: TestCertificates) {
  const script = join(projectRoot, "tools/webhook_load/_https_receiver.mjs");
  const child = new Deno.Command("node", {
    args: [script, `${tls.dir}/server.pem`, `${tls.dir}/server.key`],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const arrived: Arrival[] = [];
  const port = Promise.withResolvers<number>();
  void (async () => {
    let rest = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) port.resolve(Number(listening[1]));
        const [id, intent, at] = line.split(" ");
        if (!listening) arrived.push({ id: Number(id), intent, at: Number(at) });
      }
    }
    port.reject(new Error("the https receiver ended before listening (is node on PATH?)"));
  })();
  return {
    arrived,
    url: `https://localhost:${await port.promise}/hook`,
    async close() {
      child.kill();
      await child.status;
    },
  };
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
  const tls = options.https ? await makeCertificates("localhost") : undefined;
  const server = await spawnLoadServer({
    script: "main.ts",
    batchMax: 32,
    env: {
      WEBHOOKS_ALLOW_HTTP: String(!tls),
      WEBHOOKS_ALLOW_PRIVATE: "true",
      ...(tls ? { DENO_CERT: tls.caFile } : {}),
    },
  });
  const sink = tls ? await httpsReceiver(tls) : httpReceiver();
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
    const resumed = now();
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
      answered.set(await submit(), now());
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
      https: options.https,
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
        `${options.https ? "HTTPS" : "HTTP"}, backlog of ${figures.backlog}: ` +
          `${figures.events_per_second} events/s ` +
          `(${figures.backlog_seconds} s)\n` +
          `at ${figures.achieved_rate} submissions/s, 201 → delivery: p50 ${figures.p50_ms} ms, ` +
          `p95 ${figures.p95_ms} ms, p99 ${figures.p99_ms} ms, max ${figures.max_ms} ms\n` +
          `in the feed's order, none missing: ${figures.in_order}`,
      );
    }
    if (!allInOrder) Deno.exitCode = 1;
  } finally {
    await sink.close();
    await server.stop();
    if (tls) await Deno.remove(tls.dir, { recursive: true });
  }
}

if (import.meta.main) await main();
