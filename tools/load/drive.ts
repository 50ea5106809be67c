/**
 * Drives a server with submissions over keep-alive HTTP/1.1 connections (a
 * lean client of its own, so the generator takes little CPU) and times each
 * answer.
 * @module
 */

import { Http1Connection, postRequest } from "./http1.ts";

/** Options of {@link drive}. */
export interface DriveOptions {
  url: string;
  bodies: Uint8Array[];
  /** Keep-alive connections, each with one request in flight at most. */
  concurrency: number;
  /** `performance.now()` after which nothing more is sent. */
  deadline: number;
  /**
   * Requests per second: request i is sent at the start plus i/rate, or as soon
   * as a connection is free after that. Its latency then counts from that
   * planned time, so a server that falls behind shows it. Absent: as fast as it goes.
   */
  rate?: number;
  /** Called as each answer has been read, with `performance.now()`. */
  onAnswer?: (index: number, status: number, at: number) => void;
}

/** Sends the bodies to `POST /intents`; returns latencies (ms) and counts by status. */
export async function drive(
  options: DriveOptions,
): Promise<{ latencies: Float64Array; statuses: Map<string, number>; seconds: number }> {
  const { bodies, concurrency, deadline, rate, onAnswer } = options;
  const latencies = new Float64Array(bodies.length);
  const statuses = new Map<string, number>();
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
  let next = 0;
  let done = 0;
  const target = new URL(options.url);
  const host = target.host;
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port || 80);
  const connections: Http1Connection[] = [];
  const started = performance.now();
  const worker = async () => {
    const connection = new Http1Connection(hostname, port);
    connections.push(connection);
    while (next < bodies.length && performance.now() < deadline) {
      const i = next++;
      let sent = performance.now();
      if (rate !== undefined) {
        const planned = started + (i * 1000) / rate;
        if (planned > sent) await new Promise((ok) => setTimeout(ok, planned - sent));
        sent = planned;
      }
      const request = postRequest(host, "/intents", bodies[i]);
      let status = 0;
      try {
        status = await connection.send(request);
        count(String(status));
      } catch {
        count("network error");
      }
      const at = performance.now();
      latencies[done++] = at - sent;
      onAnswer?.(i, status, at);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    for (const connection of connections) connection.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { latencies: latencies.slice(0, done).sort(), statuses, seconds };
}
