/**
 * The load tool's scale mode (`deno task load -- --instances N --kv-delay-ms
 * D`): one KV Connect server (`testing/kv_connect/`), behind a proxy that
 * holds every chunk D ms each way (`testing/delay_proxy.ts`) when D > 0, N
 * servers started as Deno Deploy starts them on it, the same load split
 * evenly over them (connections and bodies), and a consumer following the
 * feed on the first. It reports the total and each instance's figures, the
 * service's CPU per accepted intent (all its processes, from /proc; the KV
 * server's and the proxy's apart), and how long accepted intents took to
 * appear in the feed after their 201; with `logCoverage`, and to be covered
 * by a served signed checkpoint (`coverage.ts`).
 * @module
 */

import { readCpuSeconds } from "../../testing/proc_stats.ts";
import {
  type StartedKvConnectServer,
  startKvConnectServer,
} from "../../testing/kv_connect/start.ts";
import { startDelayProxy, type StartedDelayProxy } from "../../testing/delay_proxy.ts";
import { followFeed } from "../../testing/feed_follower.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";
import { drive } from "./drive.ts";
import { round, summary } from "./figures.ts";
import { type Spawned, spawnLoadServer } from "./spawn.ts";
import { coverageLine, startCoverage } from "./coverage.ts";

/** What the scale mode is given. */
export interface ScaleOptions {
  instances: number;
  kvDelayMs: number;
  /** Connections in all, split evenly. */
  concurrency: number;
  batchMax: number;
  /** The checkout the servers run from. */
  root: string;
}

/** The servers of one scale run and the KV they share. */
export interface ScaleRig {
  servers: Spawned[];
  kv: StartedKvConnectServer;
  proxy: StartedDelayProxy | undefined;
  close(): Promise<void>;
}

/** Starts the KV Connect server, the proxy in front of it and the instances. */
export async function startRig(options: ScaleOptions): Promise<ScaleRig> {
  const kv = await startKvConnectServer();
  let proxy: StartedDelayProxy | undefined;
  const servers: Spawned[] = [];
  const close = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await proxy?.close();
    await kv.close();
  };
  try {
    if (options.kvDelayMs > 0) {
      proxy = await startDelayProxy({ target: kv.url, delayMs: options.kvDelayMs });
    }
    const env = {
      KV_PATH: proxy?.url ?? kv.url,
      DENO_KV_ACCESS_TOKEN: kv.token,
      // One log, one key: every instance signs with the same.
      LOG_SIGNING_KEY: generateNoteKey("load.test/intents").signerKey,
    };
    // One at a time: each begins where the last left the store.
    for (let i = 0; i < options.instances; i++) {
      servers.push(
        await spawnLoadServer({
          script: "main.ts",
          root: options.root,
          batchMax: options.batchMax,
          env,
          deploy: true,
        }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { servers, kv, proxy, close };
}

/**
 * The feed's wait as the servers measured it (`intents_feed_wait_seconds`,
 * summed over every instance's `/metrics`): the bucket bounds under which
 * half and 99% of the staged commits were moved, and how many were.
 */
async function serverFeedWait(servers: readonly Spawned[]) {
  const buckets = new Map<number, number>();
  for (const server of servers) {
    const text = await (await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${server.token}` },
    })).text();
    for (
      const match of text.matchAll(/^intents_feed_wait_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)
    ) {
      const bound = match[1] === "+Inf" ? Infinity : Number(match[1]);
      buckets.set(bound, (buckets.get(bound) ?? 0) + Number(match[2]));
    }
  }
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  const under = (share: number) => {
    const bound = bounds.find((b) => buckets.get(b)! >= share * total);
    return bound === undefined || !Number.isFinite(bound) ? null : bound * 1000;
  };
  return { commits: total, p50_ms_at_most: under(0.5), p99_ms_at_most: under(0.99) };
}

/** CPU seconds of processes, summed (null when one cannot be read). */
function cpuOf(pids: readonly number[]): number | null {
  let sum = 0;
  for (const pid of pids) {
    const seconds = readCpuSeconds(pid);
    if (seconds === null) return null;
    sum += seconds;
  }
  return sum;
}

/**
 * Runs the measured load over the rig: `bodies[i]` goes to instance i mod N.
 *
 * @returns the figures of the run.
 */
export async function runScale(
  rig: ScaleRig,
  options: ScaleOptions & {
    ids: string[];
    bodies: Uint8Array[];
    deadline: number;
    logCoverage?: boolean;
  },
) {
  const { servers } = rig;
  const n = servers.length;
  const perInstance = servers.map((_, k) => ({
    indices: options.ids.flatMap((_, i) => i % n === k ? [i] : []),
  }));
  const follower = followFeed(servers[0].url, servers[0].token);
  const coverage = options.logCoverage ? startCoverage(servers, follower) : undefined;
  await coverage?.ready();
  const answered = new Map<string, number>();
  const servicePids = servers.map((s) => s.pid);
  const helperPids = [rig.kv.pid, ...(rig.proxy ? [rig.proxy.pid] : [])];
  const cpuBefore = cpuOf(servicePids);
  const helpersBefore = cpuOf(helperPids);
  const started = performance.now();
  const results = await Promise.all(servers.map((server, k) => {
    const { indices } = perInstance[k];
    return drive({
      url: server.url,
      bodies: indices.map((i) => options.bodies[i]),
      concurrency: Math.max(1, Math.round(options.concurrency / n)),
      deadline: options.deadline,
      onAnswer: (j, status, at) => {
        if (status === 201) answered.set(options.ids[indices[j]], at);
        coverage?.answered(options.ids[indices[j]], status, at);
      },
    });
  }));
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuOf(servicePids);
  const helpersAfter = cpuOf(helperPids);
  // Every accepted intent should reach the feed within 2 s of its 201.
  const waitUntil = performance.now() + 5_000;
  while (
    performance.now() < waitUntil && [...answered.keys()].some((id) => !follower.seen.has(id))
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const logCoverage = await coverage?.finish() ?? null;
  await follower.stop();
  const feedWait = await serverFeedWait(servers);
  const lags: number[] = [];
  let missing = 0;
  for (const [id, at] of answered) {
    const seen = follower.seen.get(id);
    if (seen === undefined) missing++;
    else lags.push(Math.max(0, seen - at));
  }
  const accepted = answered.size;
  const statuses = new Map<string, number>();
  for (const result of results) {
    for (const [status, count] of result.statuses) {
      statuses.set(status, (statuses.get(status) ?? 0) + count);
    }
  }
  const latencies = new Float64Array(results.flatMap((r) => [...r.latencies])).sort();
  return {
    instances: n,
    kv_delay_ms_each_way: options.kvDelayMs,
    concurrency: options.concurrency,
    seconds: round(seconds),
    accepted_per_second: Math.round(accepted / seconds),
    latency_ms: summary(latencies),
    statuses: Object.fromEntries([...statuses].sort()),
    per_instance: results.map((r) => ({
      accepted_per_second: Math.round((r.statuses.get("201") ?? 0) / seconds),
      latency_ms: summary(r.latencies),
      statuses: Object.fromEntries([...r.statuses].sort()),
    })),
    service_cpu_us_per_accepted: cpuBefore !== null && cpuAfter !== null && accepted > 0
      ? Math.round(((cpuAfter - cpuBefore) * 1e6) / accepted)
      : null,
    kv_and_proxy_cpu_us_per_accepted:
      helpersBefore !== null && helpersAfter !== null && accepted > 0
        ? Math.round(((helpersAfter - helpersBefore) * 1e6) / accepted)
        : null,
    feed_ms_after_201: {
      ...summary(new Float64Array(lags).sort()),
      missing,
    },
    feed_wait_servers: feedWait,
    log_coverage_ms: logCoverage,
  };
}

/** Every instance of the rig warms up with an even share of `bodies`. */
export async function warmUp(
  rig: ScaleRig,
  bodies: readonly Uint8Array[],
  concurrency: number,
  deadline: number,
): Promise<void> {
  const count = rig.servers.length;
  await Promise.all(rig.servers.map((server, k) =>
    drive({
      url: server.url,
      bodies: bodies.filter((_, i) => i % count === k),
      concurrency: Math.max(1, Math.round(concurrency / count)),
      deadline,
    })
  ));
}

/** The figures of {@link runScale} as lines for a terminal. */
export function scaleLines(figures: Awaited<ReturnType<typeof runScale>>): string[] {
  const l = figures.latency_ms;
  const f = figures.feed_ms_after_201;
  return [
    `${figures.instances} instance(s), KV ${figures.kv_delay_ms_each_way} ms each way, ` +
    `${figures.concurrency} connections in all`,
    `accepted/s   ${figures.accepted_per_second}  in ${figures.seconds} s`,
    `latency ms   p50 ${l.p50}  p95 ${l.p95}  p99 ${l.p99}  max ${l.max}`,
    `answers      ${Object.entries(figures.statuses).map(([k, v]) => `${k}: ${v}`).join(", ")}`,
    ...figures.per_instance.map((p, k) =>
      `instance ${k}   ${p.accepted_per_second}/s  p50 ${p.latency_ms.p50}  p99 ${p.latency_ms.p99}  ` +
      Object.entries(p.statuses).map(([s, c]) => `${s}: ${c}`).join(", ")
    ),
    `service CPU  ${figures.service_cpu_us_per_accepted} µs per accepted intent (all instances); ` +
    `KV server and proxy ${figures.kv_and_proxy_cpu_us_per_accepted} µs`,
    `feed         p50 ${f.p50}  p99 ${f.p99}  max ${f.max} ms after the 201; ${f.missing} not seen`,
    `staged wait  p50 ≤ ${figures.feed_wait_servers.p50_ms_at_most} ms, p99 ≤ ` +
    `${figures.feed_wait_servers.p99_ms_at_most} ms (the servers' own, over ` +
    `${figures.feed_wait_servers.commits} staged commits)`,
    ...(figures.log_coverage_ms === null ? [] : [coverageLine(figures.log_coverage_ms)]),
  ];
}
