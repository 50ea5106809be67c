/**
 * Starts the intent submission service: reads and validates the environment,
 * opens Deno KV, brings stored data to this version's layout, does due work,
 * serves.
 *
 * `deno run -A main.ts`, with no flags, is a complete start (the unstable
 * APIs it uses are named in `deno.json`), as Deno Deploy starts it.
 * `deno task start` adds `--default-kv-path=./data/intents.kv`, used when
 * `KV_PATH` is unset; without it, `Deno.openKv()`'s default applies (the
 * managed KV on Deno Deploy).
 * @module
 */

import { dirname } from "node:path";
import { readSettings } from "./src/settings.ts";
import { SettingsError } from "./src/errors.ts";
import { createBatchedLog } from "./src/http/request_log.ts";
import { InFlightRequests } from "./src/http/shutdown.ts";
import type { DueWorkScheduler } from "./src/scheduler/due_work.ts";
import { composeService } from "./src/service.ts";

/** Writes all of `text` to stderr, around `console` (whose output telemetry exports). */
function writeStderr(text: string): void {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stderr.writeSync(bytes.subarray(offset));
}

function defaultKvPath(args: string[]): string | undefined {
  const flag = args.find((a) => a.startsWith("--default-kv-path="));
  return flag?.slice("--default-kv-path=".length) || undefined;
}

/** True for a KV_PATH that names a local file (not `:memory:`, not a KV Connect URL). */
function isFilePath(path: string | undefined): path is string {
  return path !== undefined && path !== ":memory:" && !/^https?:\/\//.test(path);
}

async function openKv(path: string | undefined): Promise<Deno.Kv> {
  if (path === undefined) return await Deno.openKv();
  if (isFilePath(path)) await Deno.mkdir(dirname(path), { recursive: true });
  return await Deno.openKv(path);
}

/**
 * Registers the cron job that does due work every minute. Deno Deploy finds
 * cron jobs only when the entry module registers them at its top level,
 * before serving, and runs one where no instance runs: so an expiry falls
 * due even when the service was scaled to zero.
 */
function registerDueWorkCron(scheduler: Promise<DueWorkScheduler>, signal: AbortSignal): void {
  if (typeof Deno.cron !== "function") {
    console.error('intents: Deno.cron is unavailable (deno.json lists "cron" as unstable)');
    return;
  }
  Deno.cron("intents-due-work", "* * * * *", { signal }, async () => {
    await (await scheduler).runDue();
  });
}

/**
 * How long a stopped process waits for its last timers and handles to end
 * before it exits regardless.
 */
const EXIT_FALLBACK_MS = 500;

/**
 * Ends a stopped process. With nothing left to run it ends by itself:
 * `Deno.exit` while the runtime exports telemetry can hang for good (a fault
 * of Deno's, seen when the exit meets a periodic metrics export), so it is
 * only the fallback, for a commit still held by another process's lock.
 */
function exitWhenIdle(drained: boolean): void {
  if (!drained) Deno.exit(0);
  Deno.unrefTimer(setTimeout(() => Deno.exit(0), EXIT_FALLBACK_MS));
}

async function main(
  scheduler: PromiseWithResolvers<DueWorkScheduler>,
  cron: AbortController,
): Promise<void> {
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
    // Straight to stderr: with telemetry on, console output is exported as logs.
    writeStderr(
      `intents: ADMIN_TOKEN is not set; this run's admin token is ${settings.adminToken}\n`,
    );
  }
  const requestLog = createBatchedLog();
  const service = composeService({ kv, settings, log: requestLog.log });
  try {
    // The fence, before this process writes: an earlier process still running fails its writes.
    if (await service.store.prepare() === "earlier") {
      console.error(
        "intents: took over a store of an earlier version (docs/deployment.md#upgrading)",
      );
    }
    if (await service.store.earlierValues()) {
      console.error(
        "intents: the store may hold values an earlier version wrote as JavaScript values; " +
          "rewrite them with deno task store-upgrade (docs/deployment.md#upgrading)",
      );
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    console.error(`intents: cannot read the store: ${reason}`);
    Deno.exit(1);
  }
  try {
    // The log's key and identity, checked against the store's before serving (docs/log.md).
    const { signer, generated } = await service.log.prepare();
    console.error(
      `intents: the log's verifier key is ${signer.verifierKey}` +
        (generated ? " (its signer key was made now and is kept in the store)" : ""),
    );
  } catch (error) {
    if (error instanceof SettingsError) {
      console.error(`intents: ${error.message}`);
      Deno.exit(2);
    }
    const reason = error instanceof Error ? error.message.split("\n", 1)[0] : String(error);
    console.error(`intents: cannot read the log's key from the store: ${reason}`);
    Deno.exit(1);
  }
  service.start();
  scheduler.resolve(service.dueWork);
  const inFlight = new InFlightRequests();
  // The signals are heard before the server listens: one sent as it starts is not lost.
  const serving: { server?: Deno.HttpServer } = {};
  let shuttingDown = false;
  const shutdown = async (signal: Deno.Signal) => {
    // A second signal changes nothing: the bound already holds.
    if (shuttingDown) return;
    shuttingDown = true;
    const timeoutMs = settings.shutdownTimeoutMs;
    console.error(`intents: ${signal}: stopping; requests in flight get up to ${timeoutMs} ms`);
    // In the order of docs/architecture.md (Shutdown), within the bound.
    const { drained, unanswered } = await service.stop({ server: serving.server!, inFlight });
    requestLog.flush();
    // A commit still waiting on another process's lock would hold close() until
    // SQLite gives up (seconds). Every commit is atomic, so the file needs no close.
    if (drained) {
      kv.close();
    }
    console.error(
      drained
        ? "intents: stopped; every request was answered"
        : `intents: stopped at the ${timeoutMs} ms bound; requests still unanswered: ${unanswered}`,
    );
    cron.abort();
    for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
    exitWhenIdle(drained);
  };
  const listeners: [Deno.Signal, () => void][] = [];
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      const listener = () => void shutdown(signal);
      Deno.addSignalListener(signal, listener);
      listeners.push([signal, listener]);
    } catch {
      // Platforms without signals (Deno Deploy, Windows for SIGTERM) manage the lifecycle.
    }
  }
  serving.server = Deno.serve({
    port: settings.port,
    hostname: settings.hostname,
    onListen: ({ hostname, port }) => {
      console.error(`intents: listening on http://${hostname}:${port}`);
    },
  }, inFlight.wrap(service.app.handler));
}

if (import.meta.main) {
  const scheduler = Promise.withResolvers<DueWorkScheduler>();
  const cron = new AbortController();
  registerDueWorkCron(scheduler.promise, cron.signal);
  await main(scheduler, cron);
}
