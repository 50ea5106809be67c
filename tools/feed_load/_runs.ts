/**
 * The two measurements of the feed tool: reading a stored history of the feed
 * (pull, one stream, many streams), and the delay from a 201 to its event on
 * a live stream. Each phase reports what it cost the server and this tool.
 * @module
 */

import process from "node:process";
import { LiveStream, pullAll, streamAll } from "./_read.ts";
import { addReference, bodyBuilder, buildBodies } from "../load/bodies.ts";
import { drive } from "../load/drive.ts";
import { round, summary } from "../load/figures.ts";
import type { Spawned } from "../load/spawn.ts";
import { readCpuSeconds, readMemory, resetPeakMemory } from "../../testing/proc_stats.ts";

/** What the runs take from the command line. */
export interface RunOptions {
  /** Intents stored before the history is read (history run). */
  history: number | undefined;
  /** Streams reading the history at once (history run). */
  readers: number | undefined;
  /** Submissions a second, for `seconds` (latency run). */
  rate: number;
  seconds: number;
  /** Submissions sent as fast as they go before the latency run. */
  warmup: number;
  /** Keep-alive connections that submit. */
  concurrency: number;
  /** The most time a phase may take. */
  maxSeconds: number;
}

/** What one phase cost the server and this tool. */
export interface Cost {
  /** The server's peak RSS during the phase, MiB. */
  server_rss_peak_mib: number | null;
  server_cpu_s: number | null;
  client_cpu_s: number;
}

/**
 * Runs one phase: the server's peak RSS is reset first where Linux allows it
 * (else it is sampled every 100 ms), and CPU is counted on both sides.
 */
async function phase<T>(pid: number, run: () => Promise<T>): Promise<[T, Cost]> {
  const exact = resetPeakMemory(pid);
  let sampled = readMemory(pid)?.current ?? 0;
  const sampler = setInterval(() => {
    sampled = Math.max(sampled, readMemory(pid)?.current ?? 0);
  }, 100);
  const serverCpu = readCpuSeconds(pid);
  const ownCpu = process.cpuUsage();
  let result: T;
  try {
    result = await run();
  } finally {
    clearInterval(sampler);
  }
  const own = process.cpuUsage(ownCpu);
  const serverCpuAfter = readCpuSeconds(pid);
  const memory = readMemory(pid);
  const peak = memory ? Math.max(sampled, exact ? memory.peak : memory.current) : null;
  return [result, {
    server_rss_peak_mib: peak === null ? null : round(peak / 2 ** 20, 1),
    server_cpu_s: serverCpu === null || serverCpuAfter === null
      ? null
      : round(serverCpuAfter - serverCpu),
    client_cpu_s: round((own.user + own.system) / 1e6),
  }];
}

/** Peak and current RSS of a process in MiB, or null. */
export function mib(pid: number): { peak: number; current: number } | null {
  const memory = readMemory(pid);
  return memory
    ? { peak: round(memory.peak / 2 ** 20, 1), current: round(memory.current / 2 ** 20, 1) }
    : null;
}

/** Stores `n` intents and returns the figures of the fill. */
async function fill(server: Spawned, options: RunOptions, n: number) {
  const refId = await addReference(server.url, server.token, "B");
  const build = await bodyBuilder({ variant: "B", kind: "ed25519", origin: "" }, refId);
  const built = await buildBodies(build, n);
  const result = await drive({
    url: server.url,
    bodies: built.bodies,
    concurrency: options.concurrency,
    deadline: performance.now() + options.maxSeconds * 1000,
  });
  const accepted = result.statuses.get("201") ?? 0;
  if (accepted !== n) {
    throw new Error(`${accepted} of ${n} were accepted: ${JSON.stringify([...result.statuses])}`);
  }
  return {
    ids: built.ids,
    figures: {
      intents: n,
      build_seconds: round(built.seconds),
      seconds: round(result.seconds),
      accepted_per_second: Math.round(accepted / result.seconds),
      server_rss_mib: mib(server.pid),
    },
  };
}

/**
 * Stores `options.history` intents, then reads the feed from the beginning by
 * pages, over one stream, and (with `options.readers`) over that many streams at once.
 *
 * @throws {Error} when a submission is refused or a read fails or runs out of time.
 */
export async function historyRun(server: Spawned, eventsToken: string, options: RunOptions) {
  const total = options.history!;
  const filled = await fill(server, options, total);
  const limits = () => ({ total, deadline: performance.now() + options.maxSeconds * 1000 });
  const perSecond = (events: number, seconds: number) => Math.round(events / seconds);
  const [pull, pullCost] = await phase(
    server.pid,
    () => pullAll(server.url, eventsToken, limits()),
  );
  const [stream, streamCost] = await phase(
    server.pid,
    () => streamAll(server.url, eventsToken, limits()),
  );
  let readers = null;
  if (options.readers !== undefined) {
    const k = options.readers;
    const [all, cost] = await phase(server.pid, async () => {
      const started = performance.now();
      const runs = await Promise.all(
        Array.from({ length: k }, () => streamAll(server.url, eventsToken, limits())),
      );
      return { runs, seconds: (performance.now() - started) / 1000 };
    });
    const events = all.runs.reduce((sum, run) => sum + run.events, 0);
    const times = all.runs.map((run) => run.seconds);
    readers = {
      readers: k,
      events,
      seconds: round(all.seconds),
      events_per_second: perSecond(events, all.seconds),
      reader_seconds: { min: round(Math.min(...times)), max: round(Math.max(...times)) },
      same_last_id: all.runs.every((run) => run.lastId === pull.lastId),
      ...cost,
    };
  }
  return {
    history: total,
    fill: filled.figures,
    pull: {
      events: pull.events,
      pages: pull.pages,
      seconds: round(pull.seconds),
      events_per_second: perSecond(pull.events, pull.seconds),
      ...pullCost,
    },
    stream: {
      events: stream.events,
      seconds: round(stream.seconds),
      events_per_second: perSecond(stream.events, stream.seconds),
      same_last_id: stream.lastId === pull.lastId,
      ...streamCost,
    },
    readers,
  };
}

/**
 * Warms up, opens a stream at the head, sends `options.rate` submissions a
 * second for `options.seconds`, and measures each event's arrival after its 201.
 *
 * @throws {Error} when the stream fails or does not reach the head in time.
 */
export async function latencyRun(server: Spawned, eventsToken: string, options: RunOptions) {
  const refId = await addReference(server.url, server.token, "B");
  const build = await bodyBuilder({ variant: "B", kind: "ed25519", origin: "" }, refId);
  const n = options.rate * options.seconds;
  const built = await buildBodies(build, options.warmup + n);
  const { concurrency } = options;
  const deadline = () => performance.now() + options.maxSeconds * 1000;
  const warm = built.bodies.slice(0, options.warmup);
  await drive({ url: server.url, bodies: warm, concurrency, deadline: deadline() });
  // At the head: the stream has delivered every event there is.
  const live = await LiveStream.open(server.url, eventsToken);
  try {
    if (!await live.until(() => live.events >= options.warmup, options.maxSeconds * 1000)) {
      throw new Error(`the stream delivered ${live.events} of ${options.warmup} warm-up events`);
    }
    const ids = built.ids.slice(options.warmup);
    const index = new Map(ids.map((id, i) => [id, i]));
    const answered = new Float64Array(n).fill(NaN);
    const delivered = new Float64Array(n).fill(NaN);
    live.onEvent = (id, at) => {
      const i = index.get(id);
      if (i !== undefined) delivered[i] = at;
    };
    const [result, cost] = await phase(server.pid, async () => {
      const result = await drive({
        url: server.url,
        bodies: built.bodies.slice(options.warmup),
        concurrency,
        deadline: deadline(),
        rate: options.rate,
        onAnswer: (i, status, at) => {
          if (status === 201) answered[i] = at;
        },
      });
      // The contract allows 2 s from a 201 to its event; wait up to 10 s for stragglers.
      const pending = () =>
        answered.some((at, i) => !Number.isNaN(at) && Number.isNaN(delivered[i]));
      await live.until(() => !pending(), 10_000);
      return result;
    });
    const delays: number[] = [];
    let early = 0;
    let missing = 0;
    for (let i = 0; i < n; i++) {
      if (Number.isNaN(answered[i])) continue;
      if (Number.isNaN(delivered[i])) missing++;
      else {
        // The server may write the event before this tool has read the 201.
        if (delivered[i] < answered[i]) early++;
        delays.push(Math.max(0, delivered[i] - answered[i]));
      }
    }
    const accepted = result.statuses.get("201") ?? 0;
    return {
      rate: options.rate,
      seconds: options.seconds,
      warmup: options.warmup,
      concurrency,
      sent: result.latencies.length,
      accepted,
      achieved_per_second: Math.round(accepted / result.seconds),
      statuses: Object.fromEntries([...result.statuses].sort()),
      submit_ms: summary(result.latencies),
      delivery_ms: summary(new Float64Array(delays).sort()),
      delivered: delays.length,
      events_before_201: early,
      missing_events: missing,
      ...cost,
    };
  } finally {
    await live.close();
  }
}
