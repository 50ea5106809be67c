/**
 * Measures the event feed (`GET /events`) of a server this tool starts
 * (`main.ts` on 127.0.0.1 with a temp KV file, `EVENTS_TOKEN` set and used).
 *
 * ```sh
 * deno task feed-load -- --history 100000 [--readers 200]
 * deno task feed-load -- --latency --rate 1000 --seconds 20
 * ```
 *
 * `--history N` stores N intents through grouped submissions (`--concurrency`
 * connections, default 64, as fast as they go), then reads the whole feed from
 * the beginning: by pages of `limit=1000` one after another (pull), then over
 * one stream until N events came (stream); `--readers K` then reads it with K
 * streams at once. Each phase reports events/s, the server's peak RSS during
 * it (its high-water mark is reset before each phase) and the CPU seconds of
 * the server and of this tool, which shares the machine.
 *
 * `--latency` sends `--warmup W` submissions (default 1000), opens one stream
 * and reads it to the head, then sends `--rate R` submissions a second for
 * `--seconds S` (request i planned at start + i/R, over `--concurrency`
 * keep-alive connections), and reports, per intent, its event's arrival on the
 * stream minus its 201's arrival: p50/p95/p99/max, the achieved rate, and how
 * many events arrived before their 201 was read (counted as 0 ms).
 *
 * Also: `--batch-max B` (`COMMIT_BATCH_MAX`, default 64), `--max-seconds T`
 * (the most time a phase may take, default 300), `--json` (one JSON object).
 * @module
 */

import { type Cost, historyRun, latencyRun, mib, type RunOptions } from "./_runs.ts";
import { commitOf, projectRoot, type Spawned, spawnLoadServer } from "../load/spawn.ts";
import { toolOptions } from "../options.ts";

const options = toolOptions("feed-load");
// Typed, so that a call ends the flow where it fails.
const fail: (message: string) => never = options.fail;
const intOption = options.int;

/** Parsed command line. */
interface Options extends RunOptions {
  latency: boolean;
  batchMax: number;
  json: boolean;
}

const USAGE = "usage: deno task feed-load -- (--history N [--readers K] | --latency " +
  "[--rate R] [--seconds S] [--warmup W]) [--concurrency C] [--batch-max B] [--max-seconds T] " +
  "[--json]";

function readOptions(args: string[]): Options {
  const values = options.parse(args, {
    history: { type: "string" },
    readers: { type: "string" },
    latency: { type: "boolean" },
    rate: { type: "string" },
    seconds: { type: "string" },
    concurrency: { type: "string" },
    warmup: { type: "string" },
    "batch-max": { type: "string" },
    "max-seconds": { type: "string" },
    json: { type: "boolean" },
  }, USAGE);
  const latency = values.latency ?? false;
  if ((values.history === undefined) === !latency) fail(`give --history N or --latency\n${USAGE}`);
  if (latency && values.readers !== undefined) fail("--readers goes with --history");
  if (!latency && (values.rate ?? values.seconds ?? values.warmup) !== undefined) {
    fail("--rate, --seconds and --warmup go with --latency");
  }
  return {
    history: values.history === undefined
      ? undefined
      : intOption(values.history, "history", 0, 1_000_000),
    readers: values.readers === undefined
      ? undefined
      : intOption(values.readers, "readers", 0, 1000),
    latency,
    rate: intOption(values.rate, "rate", 1000, 100_000),
    seconds: intOption(values.seconds, "seconds", 20, 3600),
    concurrency: intOption(values.concurrency, "concurrency", 64, 1024),
    // Zero is allowed here: no warm-up.
    warmup: values.warmup === "0" ? 0 : intOption(values.warmup, "warmup", 1000, 1_000_000),
    batchMax: intOption(values["batch-max"], "batch-max", 64, 99),
    maxSeconds: intOption(values["max-seconds"], "max-seconds", 300, 3600),
    json: values.json ?? false,
  };
}

function costText(cost: Cost): string {
  const rss = cost.server_rss_peak_mib === null ? "unknown" : `${cost.server_rss_peak_mib} MiB`;
  return `server RSS peak ${rss}; CPU s: server ${cost.server_cpu_s ?? "?"}, ` +
    `this tool ${cost.client_cpu_s}`;
}

type HistoryFigures = Awaited<ReturnType<typeof historyRun>>;
type LatencyFigures = Awaited<ReturnType<typeof latencyRun>>;

function historyText(f: HistoryFigures): string[] {
  const fill = f.fill;
  const same = (ok: boolean) => ok ? "" : "  (LAST EVENT ID DIFFERS FROM THE PULL READ)";
  const lines = [
    `history    ${f.history} intents stored in ${fill.seconds} s (${fill.accepted_per_second}/s), ` +
    `server RSS then ${fill.server_rss_mib?.current ?? "?"} MiB (peak ${
      fill.server_rss_mib?.peak ?? "?"
    })`,
    `pull       ${f.pull.events_per_second} events/s: ${f.pull.events} events in ` +
    `${f.pull.pages} pages, ${f.pull.seconds} s; ${costText(f.pull)}`,
    `stream     ${f.stream.events_per_second} events/s: ${f.stream.events} events in ` +
    `${f.stream.seconds} s; ${costText(f.stream)}${same(f.stream.same_last_id)}`,
  ];
  const r = f.readers;
  if (r) {
    lines.push(
      `readers    ${r.events_per_second} events/s in all: ${r.readers} streams, ${r.events} ` +
        `events in ${r.seconds} s (one stream ${r.reader_seconds.min}–${r.reader_seconds.max} s); ` +
        `${costText(r)}${same(r.same_last_id)}`,
    );
  }
  return lines;
}

function latencyText(f: LatencyFigures): string[] {
  const d = f.delivery_ms;
  const s = f.submit_ms;
  return [
    `rate       ${f.achieved_per_second}/s achieved of ${f.rate}/s planned for ${f.seconds} s ` +
    `(${f.sent} sent after ${f.warmup} warm-up, ${f.concurrency} connections)`,
    `answers    ${Object.entries(f.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")}`,
    `delivery   ms p50 ${d.p50}  p95 ${d.p95}  p99 ${d.p99}  max ${d.max}  ` +
    `(event arrival on the stream minus 201 arrival, ${f.delivered} events)`,
    `           ${f.events_before_201} events arrived before their 201 was read ` +
    `(counted as 0 ms); ${f.missing_events} not delivered within 10 s`,
    `201        ms p50 ${s.p50}  p95 ${s.p95}  p99 ${s.p99}  max ${s.max}  ` +
    `(from each request's planned time)`,
    `cost       ${costText(f)}`,
  ];
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const eventsToken = crypto.randomUUID().replaceAll("-", "");
  let server: Spawned;
  try {
    server = await spawnLoadServer({
      script: "main.ts",
      batchMax: options.batchMax,
      env: { EVENTS_TOKEN: eventsToken },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  let failure: string | undefined;
  try {
    const head = {
      date: new Date().toISOString(),
      cpus: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      mode: `spawned main.ts, file KV, COMMIT_BATCH_MAX=${options.batchMax}`,
      commit: await commitOf(projectRoot),
    };
    const figures = options.latency
      ? await latencyRun(server, eventsToken, options)
      : await historyRun(server, eventsToken, options);
    const end = { server_rss_mib_end: mib(server.pid)?.current ?? null };
    if (options.json) {
      console.log(JSON.stringify({ ...head, ...figures, ...end }));
      return;
    }
    console.log(
      [
        `${head.date}  ${head.cpus} CPUs  Deno ${head.deno}  ${head.mode}` +
        (head.commit ? ` (${head.commit})` : ""),
        ...("history" in figures ? historyText(figures) : latencyText(figures)),
        `server RSS at the end ${end.server_rss_mib_end ?? "?"} MiB`,
      ].join("\n"),
    );
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  } finally {
    await server.stop();
  }
  // Only once the server has stopped: exiting earlier would leave it running.
  if (failure !== undefined) fail(failure);
}

if (import.meta.main) await main();
