/**
 * The service run as Deno Deploy runs it, for the Deploy-shaped end-to-end
 * test: instances started with `deno run -A main.ts` and no other flag, with
 * `DENO_DEPLOY=true`, on one store; stopped with SIGINT and killed 5 s later
 * if still alive. Also the load they serve, round-robin over the instances
 * not stopping, and a feed consumer that follows the event stream from
 * instance to instance with `Last-Event-ID`.
 * @module
 */

import { type Ed25519Key, signVariantB } from "../../client/mod.ts";
import { openSse } from "../../testing/sse.ts";
import { startServer, type TestServer } from "./server.ts";
import { sleep } from "./time.ts";

/** Deno Deploy kills an instance this long after its SIGINT. */
export const KILL_AFTER_MS = 5_000;

/** One instance: its process, and whether its SIGINT was sent. */
export interface Instance {
  name: string;
  server: TestServer;
  stopping: boolean;
}

/** How an instance ended after its SIGINT. */
export interface Stopped {
  name: string;
  code: number;
  /** Milliseconds from the SIGINT to the exit. */
  ms: number;
  /** True when it was still alive {@link KILL_AFTER_MS} after the SIGINT and was killed. */
  killed: boolean;
  stderr: string;
}

/** The instances of one deployment, sharing one store. */
export class Fleet {
  readonly live: Instance[] = [];
  #started = 0;

  /**
   * @param kvPath the store (a KV Connect URL).
   * @param deno the Deno binary; default: this one.
   * @param env the deployment's environment.
   */
  constructor(
    readonly kvPath: string,
    readonly deno: string | undefined,
    readonly env: Record<string, string>,
  ) {}

  /** Instances that take new requests. */
  serving(): Instance[] {
    return this.live.filter((instance) => !instance.stopping);
  }

  /** Starts an instance: `deno run -A main.ts`, nothing else. */
  async start(): Promise<Instance> {
    const name = `instance ${++this.#started}`;
    const server = await startServer({
      kvPath: this.kvPath,
      deno: this.deno,
      flags: [],
      env: this.env,
    });
    const instance = { name, server, stopping: false };
    this.live.push(instance);
    return instance;
  }

  /** SIGINT; SIGKILL {@link KILL_AFTER_MS} later if still alive; waits for the exit. */
  async stop(instance: Instance): Promise<Stopped> {
    instance.stopping = true;
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      try {
        Deno.kill(instance.server.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, KILL_AFTER_MS);
    const { code, ms } = await instance.server.terminate("SIGINT");
    clearTimeout(timer);
    this.live.splice(this.live.indexOf(instance), 1);
    return { name: instance.name, code, ms, killed, stderr: instance.server.stderr() };
  }

  /** Kills every instance left (after a failure). */
  async close(): Promise<void> {
    await Promise.all(this.live.splice(0).map((i) => i.server.stop({ kill: true })));
  }
}

/** What a load answered. */
export interface LoadResult {
  /** Every id answered 201, with the instance that answered it. */
  created: Map<string, string>;
  /** 201s per instance, and of those how many came after its SIGINT. */
  perInstance: Map<string, { created: number; afterSignal: number }>;
  /** Answers by status; 0 counts requests that got no answer (an instance going away). */
  statuses: Record<number, number>;
  /** Answers other than 201, 503 `unavailable` and 429. */
  unexpected: string[];
}

/**
 * Submits fresh Variant B intents under `policyId` from `concurrency`
 * connections, round-robin over the serving instances, signed in turn by
 * `keys`, until `stop` is called.
 */
export function startLoad(
  fleet: Fleet,
  policyId: string,
  keys: readonly Ed25519Key[],
  concurrency: number,
): { stop(): Promise<LoadResult> } {
  const result: LoadResult = {
    created: new Map(),
    perInstance: new Map(),
    statuses: {},
    unexpected: [],
  };
  const http = Deno.createHttpClient({});
  let stopped = false;
  let n = 0;
  const worker = async () => {
    while (!stopped) {
      const targets = fleet.serving();
      if (targets.length === 0) {
        await sleep(20);
        continue;
      }
      const k = n++;
      const instance = targets[k % targets.length];
      const id = crypto.randomUUID();
      const body = signVariantB(
        { id, policy_id: policyId, attrs: { fields: { k } } },
        keys[k % keys.length],
      );
      let status = 0;
      let text = "";
      try {
        const response = await fetch(`${instance.server.url}/intents`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          client: http,
        });
        status = response.status;
        text = await response.text();
      } catch {
        status = 0; // No answer: nothing was promised.
      }
      result.statuses[status] = (result.statuses[status] ?? 0) + 1;
      if (status === 201) {
        if (result.created.has(id)) result.unexpected.push(`${id} answered 201 twice`);
        result.created.set(id, instance.name);
        const counts = result.perInstance.get(instance.name) ?? { created: 0, afterSignal: 0 };
        counts.created++;
        if (instance.stopping) counts.afterSignal++;
        result.perInstance.set(instance.name, counts);
      } else if (status === 0) {
        await sleep(10);
      } else if (status !== 429 && !(status === 503 && text.includes('"unavailable"'))) {
        result.unexpected.push(`${instance.name}: ${status} ${text}`);
      }
    }
  };
  const running = Promise.all(Array.from({ length: concurrency }, worker)).finally(() =>
    http.close()
  );
  return {
    async stop() {
      stopped = true;
      await running;
      return result;
    },
  };
}

/** One event as the consumer saw it. */
export interface SeenEvent {
  id: string;
  type: string;
  intent: string;
}

/** One stream the consumer read, and how it ended. */
export interface StreamRead {
  instance: string;
  events: number;
  /** `ended`: the server ended it; `cut`: the connection failed; `left`: the consumer left. */
  end: "ended" | "cut" | "left";
}

/**
 * A feed consumer as an orchestrator runs one: reads `GET /events` as
 * Server-Sent Events from one instance and, when that stream ends, resumes on
 * another with the last id it processed as `Last-Event-ID`.
 */
export class FeedFollower {
  readonly seen: SeenEvent[] = [];
  readonly streams: StreamRead[] = [];
  /** The instance it is reading from, while it is. */
  current: Instance | undefined;

  constructor(readonly fleet: Fleet, readonly token: string) {}

  /** Follows the feed until `done()` holds (looked at after each event and keep-alive). */
  async run(done: () => boolean): Promise<void> {
    let last: Instance | undefined;
    while (!done()) {
      const targets = this.fleet.serving();
      // Another instance than the last one, where there is one.
      const instance = targets.find((i) => i !== last) ?? targets[0];
      if (!instance) {
        await sleep(50);
        continue;
      }
      last = instance;
      const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
      const lastSeen = this.seen.at(-1);
      if (lastSeen) headers["last-event-id"] = lastSeen.id;
      let stream;
      try {
        stream = await openSse(`${instance.server.url}/events`, headers);
      } catch {
        await sleep(50); // It went away before answering.
        continue;
      }
      if (stream.response.status !== 200) {
        throw new Error(`${instance.name}: GET /events ${stream.response.status}`);
      }
      const read: StreamRead = { instance: instance.name, events: 0, end: "ended" };
      this.streams.push(read);
      this.current = instance;
      try {
        for await (const item of stream.items) {
          if (item.kind === "event") {
            this.seen.push({ id: item.id!, type: item.event, intent: JSON.parse(item.data).id });
            read.events++;
          }
          if (done()) {
            read.end = "left";
            break;
          }
        }
      } catch {
        read.end = "cut";
      } finally {
        this.current = undefined;
        stream.close();
      }
    }
  }

  /** The instance it reads from, once it reads from one. */
  async reading(): Promise<Instance> {
    while (!this.current || this.current.stopping) await sleep(20);
    return this.current;
  }
}
