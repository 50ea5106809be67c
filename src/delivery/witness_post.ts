/**
 * The transport of witness calls (docs/interface.md §14): a `POST` through
 * the webhook delivery's attempt (`deliverOnce`: the URL and address rules,
 * the answer read within 64 KiB and 256 reads, one time limit for the whole
 * call), the answer's body and content type kept, and one kept-alive
 * connection per witness, as C2SP tlog-witness asks of clients.
 * @module
 */

import { deliverOnce, type SocketRules } from "./deliver.ts";
import { KeptConnection } from "./kept_connection.ts";

/** What a witness answered: its status (null when none came), duration, body and type. */
export interface PostedAnswer {
  status: number | null;
  durationMs: number;
  body?: Uint8Array;
  contentType?: string;
}

/** How witnesses are reached: `LOG_WITNESS_TIMEOUT_MS` and `LOG_WITNESSES_ALLOW_INSECURE`. */
export interface WitnessTransportOptions {
  timeoutMs: number;
  allowInsecure: boolean;
  /** The process's knowledge of the runtime's socket rule. */
  sockets: SocketRules;
  /** PEM certificates trusted besides the platform's roots. For tests. */
  caCerts?: string[];
}

/**
 * A function that posts a body to a witness's `add-checkpoint` URL and reads
 * its answer; it rejects only when `signal` aborts.
 */
export function witnessTransport(
  options: WitnessTransportOptions,
): {
  post(request: { url: string; body: Uint8Array; signal: AbortSignal }): Promise<PostedAnswer>;
  close(): void;
} {
  const kept = new Map<string, KeptConnection>();
  return {
    async post({ url, body, signal }) {
      let connection = kept.get(url);
      if (connection === undefined) kept.set(url, connection = new KeptConnection());
      const result = await deliverOnce({
        url,
        headers: { "content-type": "text/plain; charset=utf-8" },
        body,
        timeoutMs: options.timeoutMs,
        allowHttp: options.allowInsecure,
        allowPrivate: options.allowInsecure,
        sockets: options.sockets,
        connection,
        caCerts: options.caCerts,
        signal,
        keepAnswer: true,
      });
      const answer: PostedAnswer = { status: result.status, durationMs: result.durationMs };
      if (result.body !== undefined) answer.body = result.body;
      if (result.contentType !== undefined) answer.contentType = result.contentType;
      return answer;
    },
    close() {
      for (const connection of kept.values()) connection.close();
      kept.clear();
    },
  };
}
