/**
 * Starts the intent submission service: reads and validates the environment,
 * opens Deno KV, serves.
 *
 * `deno task start` passes `--default-kv-path=./data/intents.kv`, used when
 * `KV_PATH` is unset; without it, `Deno.openKv()`'s default applies (the
 * managed KV on Deno Deploy).
 * @module
 */

import { dirname } from "node:path";
import { readSettings, SettingsError } from "./src/settings.ts";
import { createApp } from "./src/http/app.ts";
import { createWriter } from "./src/storage/writer.ts";
import { createBatchedLog } from "./src/http/request_log.ts";
import { KvStore } from "./src/storage/kv_store.ts";
import { DeadlineSweeper } from "./src/http/deadlines.ts";
import { expireIntent } from "./src/domain/approve.ts";
import { InFlightRequests, stopServing } from "./src/http/shutdown.ts";
import { inlinePreparer, PreparePool, type Preparer } from "./src/workers/prepare_pool.ts";
import type { VerifyContext } from "./src/domain/authorship.ts";

function defaultKvPath(args: string[]): string | undefined {
  const flag = args.find((a) => a.startsWith("--default-kv-path="));
  return flag?.slice("--default-kv-path=".length) || undefined;
}

async function openKv(path: string | undefined): Promise<Deno.Kv> {
  if (path === undefined) return await Deno.openKv();
  const isFile = path !== ":memory:" && !/^https?:\/\//.test(path);
  if (isFile) await Deno.mkdir(dirname(path), { recursive: true });
  return await Deno.openKv(path);
}

/**
 * The pool of `VERIFY_WORKERS` threads, or the serving thread itself where
 * there are none or this runtime has no workers.
 */
function startPreparer(threads: number, ctx: VerifyContext): Preparer {
  if (threads === 0) return inlinePreparer(ctx);
  try {
    const pool = new PreparePool(threads, ctx);
    console.error(`intents: submissions are parsed and verified on ${threads} worker thread(s)`);
    return pool;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.error(`intents: VERIFY_WORKERS: no worker threads here (${reason}); verifying inline`);
    return inlinePreparer(ctx);
  }
}

async function main(): Promise<void> {
  let settings;
  try {
    settings = readSettings(Deno.env.toObject());
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`intents: ${error.message}`);
      Deno.exit(2);
    }
    throw error;
  }
  const kvPath = settings.kvPath ?? defaultKvPath(Deno.args);
  let kv: Deno.Kv;
  try {
    kv = await openKv(kvPath);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    console.error(`intents: KV_PATH: cannot open ${kvPath ?? "the default KV"}: ${reason}`);
    Deno.exit(2);
  }
  if (settings.adminTokenGenerated) {
    console.error(
      `intents: ADMIN_TOKEN is not set; this run's admin token is ${settings.adminToken}`,
    );
  }
  const now = () => new Date();
  const store = new KvStore(kv, { now });
  try {
    const moved = await store.upgrade();
    if (moved > 0) console.error(`intents: moved ${moved} earlier intents into the feed`);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    console.error(`intents: cannot move earlier intents into the feed: ${reason}`);
    Deno.exit(1);
  }
  const writer = createWriter(store, { batchMax: settings.commitBatchMax });
  const requestLog = createBatchedLog();
  // Body reads time out up to a tenth of the limit late (at most 250 ms).
  const deadlines = new DeadlineSweeper(Math.min(250, Math.max(10, settings.bodyTimeoutMs / 10)));
  const stopping = new AbortController();
  const app = createApp({
    preparer: (ctx) => startPreparer(settings.verifyWorkers, ctx),
    store,
    settings,
    writer,
    now,
    log: requestLog.log,
    deadlines,
    stopping: stopping.signal,
  });
  // Pending intents expire as the KV queue delivers their deadlines (here, or to another process).
  store.listenExpiries(async (id) => {
    if (await expireIntent({ store, now }, id) === "expired") app.metrics.intentExpired();
  });
  const inFlight = new InFlightRequests();
  const server = Deno.serve({
    port: settings.port,
    hostname: settings.hostname,
    onListen: ({ hostname, port }) => {
      console.error(`intents: listening on http://${hostname}:${port}`);
    },
  }, inFlight.wrap(app.handler));

  let shuttingDown = false;
  const shutdown = async (signal: Deno.Signal) => {
    // A second signal changes nothing: the bound already holds.
    if (shuttingDown) return;
    shuttingDown = true;
    const timeoutMs = settings.shutdownTimeoutMs;
    console.error(`intents: ${signal}: stopping; requests in flight get up to ${timeoutMs} ms`);
    const { drained, unanswered } = await stopServing({
      server,
      inFlight,
      stopping,
      deadlines,
      timeoutMs,
    });
    deadlines.stop();
    app.context.preparer.close();
    requestLog.flush();
    // A commit still waiting on another process's lock would hold close() until
    // SQLite gives up (seconds). Every commit is atomic, so the file needs no close.
    if (drained) kv.close();
    console.error(
      drained
        ? "intents: stopped; every request was answered"
        : `intents: stopped at the ${timeoutMs} ms bound; requests still unanswered: ${unanswered}`,
    );
    Deno.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => void shutdown(signal));
    } catch {
      // Platforms without signals (Deno Deploy, Windows for SIGTERM) manage the lifecycle.
    }
  }
}

if (import.meta.main) await main();
