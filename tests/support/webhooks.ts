/**
 * Real webhook receivers for the end-to-end tests: HTTP or HTTPS servers on
 * 127.0.0.1 that record every delivery as it arrived (headers, the body's
 * exact bytes, when), answer as a test tells them, and count how many
 * deliveries to them are in flight at once. Also the environment a server
 * needs to deliver to them (certificates: `testing/certificates.ts`).
 * @module
 */

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { base64 } from "@scure/base";
import type { IntentEvent, IntentsClient, WebhookEndpoint } from "../../client/mod.ts";
import { sleep } from "./time.ts";

export { HAS_OPENSSL, makeCertificates } from "../../testing/certificates.ts";

/** What a server needs to deliver to receivers on 127.0.0.1 over plain HTTP, quickly retried. */
export const LOCAL_WEBHOOKS = {
  WEBHOOKS_ALLOW_HTTP: "true",
  WEBHOOKS_ALLOW_PRIVATE: "true",
  WEBHOOK_TIMEOUT_MS: "2000",
};

/** One delivery as it arrived. */
export interface Delivery {
  /** `webhook-id`. */
  id: string;
  timestamp: string;
  signature: string;
  contentType: string | null;
  /** The body's exact text. */
  body: string;
  /** The body, parsed. */
  event: IntentEvent;
  path: string;
  /** `Date.now()` when it arrived. */
  at: number;
  /** What the receiver answered. */
  status: number;
}

/** How a receiver answers one delivery: a status (and headers), after an optional delay. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** Decides the answer to a delivery; `attempt` counts the deliveries of this id so far (from 1). */
export type Responder = (delivery: Omit<Delivery, "status">, attempt: number) => Answer;

/** A receiver: where it listens, what it got. */
export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** The most deliveries that were in flight at once. */
  maxInFlight: number;
  /** Changes how it answers from now on. */
  answer(responder: Responder): void;
  /** Resolves once `predicate` holds of the deliveries, or fails the test after `timeoutMs`. */
  until(
    predicate: (deliveries: Delivery[]) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver (HTTPS when `tls` is given) that answers 204 unless told otherwise. */
export function startReceiver(
  options: { tls?: { cert: string; key: string }; hostname?: string } = {},
): Receiver {
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  let responder: Responder = () => ({ status: 204 });
  let inFlight = 0;
  const receiver = {
    deliveries,
    maxInFlight: 0,
  } as Receiver;
  const server = Deno.serve({
    hostname: options.hostname ?? "127.0.0.1",
    port: 0,
    onListen() {},
    ...options.tls,
  }, async (request) => {
    inFlight++;
    receiver.maxInFlight = Math.max(receiver.maxInFlight, inFlight);
    try {
      const body = await request.text();
      const id = request.headers.get("webhook-id") ?? "";
      const seen = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, seen);
      const got = {
        id,
        timestamp: request.headers.get("webhook-timestamp") ?? "",
        signature: request.headers.get("webhook-signature") ?? "",
        contentType: request.headers.get("content-type"),
        body,
        event: JSON.parse(body),
        path: new URL(request.url).pathname,
        at: Date.now(),
      };
      const answer = responder(got, seen);
      if (answer.delayMs) await sleep(answer.delayMs);
      deliveries.push({ ...got, status: answer.status });
      const empty = answer.status === 204 || answer.status === 304;
      return new Response(empty ? null : "ok", { status: answer.status, headers: answer.headers });
    } finally {
      inFlight--;
    }
  });
  const scheme = options.tls ? "https" : "http";
  const host = options.tls ? "localhost" : "127.0.0.1";
  return Object.assign(receiver, {
    url: `${scheme}://${host}:${server.addr.port}/hook`,
    port: server.addr.port,
    answer(next: Responder) {
      responder = next;
    },
    async until(predicate: (d: Delivery[]) => boolean, timeoutMs: number, what: string) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(deliveries)) {
        if (Date.now() > deadline) {
          assert.fail(
            `${what}: not within ${timeoutMs} ms (${deliveries.length} deliveries: ${
              deliveries.slice(-5).map((d) => `${d.id}→${d.status}`).join(" ")
            })`,
          );
        }
        await sleep(20);
      }
    },
    close: () => server.shutdown(),
  });
}

/** The event ids delivered and acknowledged (2xx), in arrival order. */
export function acknowledged(deliveries: readonly Delivery[]): number[] {
  return deliveries.filter((d) => d.status >= 200 && d.status < 300).map((d) => Number(d.id));
}

/**
 * HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed with a secret's bytes, by
 * `node:crypto` rather than the service's code: what `webhook-signature`
 * must carry as `v1,<base64>`.
 */
export function independentSignature(secret: string, d: Delivery): string {
  const key = base64.decode(secret.slice("whsec_".length));
  const mac = createHmac("sha256", key).update(`${d.id}.${d.timestamp}.${d.body}`).digest();
  return `v1,${base64.encode(new Uint8Array(mac))}`;
}

/**
 * The endpoint once `done` holds of it, read every 50 ms for up to 2 s: a
 * delivery is recorded just after its receiver answered, so what the receiver
 * saw is in the endpoint's state a moment later.
 */
export async function settled(
  client: IntentsClient,
  id: string,
  done: (endpoint: WebhookEndpoint) => boolean,
  withinMs = 2_000,
): Promise<WebhookEndpoint> {
  const end = performance.now() + withinMs;
  for (;;) {
    const endpoint = await client.webhooks.get(id);
    if (done(endpoint)) return endpoint;
    assert.ok(
      performance.now() < end,
      `endpoint ${id} not settled within ${withinMs} ms: ${JSON.stringify(endpoint)}`,
    );
    await sleep(50);
  }
}
