/**
 * Stopping the server within a bound (`SHUTDOWN_TIMEOUT_MS`). `Deno.serve`'s
 * `shutdown()` resolves only once every connection has closed, which a client
 * stalled inside its body can put off for ever; so requests are counted until
 * their response is delivered (docs/architecture.md, "Shutdown").
 * @module
 */

import type { DeadlineSweeper } from "./deadlines.ts";
import { delay, within } from "../timing.ts";

/**
 * How long the count must stay at zero: a request read just before the
 * listener closed may reach the handler a moment later.
 */
const SETTLE_MS = 20;

/** Counts requests from their arrival until their response is delivered or fails. */
export class InFlightRequests {
  #count = 0;
  #waiting: (() => void)[] = [];
  readonly #done = () => {
    this.#count--;
    if (this.#count === 0) { for (const resolve of this.#waiting.splice(0)) resolve(); }
  };

  /** Requests whose response is not yet delivered. */
  get count(): number {
    return this.#count;
  }

  /**
   * Wraps an app handler for `Deno.serve`, counting each request until
   * `info.completed` settles (the response was delivered, or could not be);
   * the handler is given `info` (the peer's address).
   */
  wrap(
    handler: (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response>,
  ): Deno.ServeHandler {
    return (request, info) => {
      this.#count++;
      info.completed.then(this.#done, this.#done);
      return handler(request, info);
    };
  }

  /** Resolves once no request is in flight (at once when none is). */
  idle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Resolves once no request is in flight and none arrives for {@link SETTLE_MS}. */
  async settled(): Promise<void> {
    for (;;) {
      await this.idle();
      await delay(SETTLE_MS);
      if (this.#count === 0) return;
    }
  }
}

/** What {@link stopServing} stops. */
export interface Serving {
  server: Pick<Deno.HttpServer, "shutdown">;
  inFlight: InFlightRequests;
  /** The app's `stopping`: long-polls and event streams end when it aborts. */
  stopping: AbortController;
  /** The server's body-read deadlines: reads still waiting are cut (503). */
  deadlines?: DeadlineSweeper;
  /** The bound: `SHUTDOWN_TIMEOUT_MS`. */
  timeoutMs: number;
}

/** How serving ended. */
export interface Stopped {
  /** True when every request was answered within the bound. */
  drained: boolean;
  /** Requests still unanswered when the bound passed (0 when drained). */
  unanswered: number;
}

/**
 * Stops serving: ends long-polls and event streams, stops accepting
 * connections, cuts request bodies still arriving (503 with `Connection:
 * close`), and waits at most `timeoutMs` until every other request is answered.
 *
 * @example
 * ```ts
 * const inFlight = new InFlightRequests();
 * const server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   inFlight.wrap(() => Promise.resolve(new Response("ok"))),
 * );
 * const stopping = new AbortController();
 * const { drained } = await stopServing({ server, inFlight, stopping, timeoutMs: 1_000 });
 * drained; // true: nothing was in flight
 * ```
 */
export async function stopServing(serving: Serving): Promise<Stopped> {
  const { server, inFlight, stopping, deadlines, timeoutMs } = serving;
  // First, so that the responses of long-polls and streams end and are not waited for.
  stopping.abort();
  // Resolves once every connection has closed, which a stalled client can put off for ever.
  const closed = server.shutdown().then(() => {}, () => inFlight.settled());
  deadlines?.cutAll();
  const done = Promise.race([closed, inFlight.settled()]).then(() => true);
  const drained = await within(done, timeoutMs) === true;
  return { drained, unanswered: drained ? 0 : inFlight.count };
}
