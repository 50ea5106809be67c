/**
 * One webhook delivery attempt (docs/interface.md §11), safe against DNS
 * rebinding: the URL rule again, every address the name resolves to judged,
 * the connection opened on the path the runtime allows (`transport.ts`), and
 * the request written by hand, since `fetch` resolves names itself, follows
 * redirects and cannot be pinned to an address. The answer is read within
 * 64 KiB and 256 reads (`_answer.ts`).
 * @module
 */

import { judgeAddress } from "../webhooks/addresses.ts";
import type { DeliveryError } from "../webhooks/endpoint.ts";
import { persists, type ResponseHead } from "../http1_response.ts";
import { AnswerReader } from "./_answer.ts";
import type { KeptConnection } from "./kept_connection.ts";
import { closeQuietly, Deadline } from "./_deadline.ts";
import { isIpLiteral } from "../ip_address.ts";
import { MAX_RETRY_AFTER_S, parseRetryAfter } from "./retry_after.ts";
import {
  type Connector,
  openConnection,
  RefusedAddress,
  resolveHost,
  type Resolver,
  SocketRules,
} from "./transport.ts";

export { type Connector, resolveHost, type Resolver, SocketRules };
export { MAX_ANSWER_BYTES, MAX_ANSWER_READS } from "./_answer.ts";

/** The outcome of one attempt. */
export interface DeliveryResult {
  /** The answer's HTTP status, or `null` when none came. 2xx acknowledges the event. */
  status: number | null;
  /** `null` when an answer came that is not a redirect, else the `error` of docs/interface.md §11. */
  error: DeliveryError | null;
  /** Milliseconds from the start until the answer's head was read, or until the failure. */
  durationMs: number;
  /** For a 429 or 503: the `Retry-After` it carried, in seconds, when it is at most 3600. */
  retryAfterS?: number;
  /** The address connected to, or the address refused (for logs; absent when none was reached). */
  address?: string;
  /** With `keepAnswer`: the answer's body, when it all arrived within the limits. */
  body?: Uint8Array;
  /** With `keepAnswer`: the answer's `Content-Type`, when it has one. */
  contentType?: string;
}

/** What {@link deliverOnce} sends, and how. */
export interface DeliverOptions {
  /** The endpoint's URL, `https:` or `http:` (already checked by `checkWebhookUrl`). */
  url: string;
  /**
   * The request's headers, sent exactly as given (see `deliveryHeaders`);
   * `host`, `content-length` and `connection: close` are added here.
   */
  headers: Record<string, string>;
  /** The request body, sent as it is. */
  body: string | Uint8Array;
  /** The most the whole attempt may take (`WEBHOOK_TIMEOUT_MS`). */
  timeoutMs: number;
  /** `WEBHOOKS_ALLOW_PRIVATE`: when true, addresses are not judged. */
  allowPrivate: boolean;
  /** `WEBHOOKS_ALLOW_HTTP`: when false, an `http:` URL fails `refused_url` without a connection. */
  allowHttp: boolean;
  /** The process's knowledge of the runtime's socket rule (see `SocketRules`), one per process. */
  sockets: SocketRules;
  /** How names are resolved; default {@link resolveHost} (`Deno.resolveDns`). For tests. */
  resolve?: Resolver;
  /** How plain TCP connections are opened on the pinned path; default `Deno.connect`. For tests. */
  connect?: Connector;
  /**
   * Where a connection is kept between attempts (`kept_connection.ts`); without
   * it, each attempt has a connection of its own (`connection: close`).
   */
  connection?: KeptConnection;
  /** PEM certificates trusted besides the platform's roots. For tests. */
  caCerts?: string[];
  /** Ends the attempt early (the process is stopping): it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Keep the answer's body and content type in the result (a witness's answer, §14). */
  keepAnswer?: boolean;
}

/** How long an answer's body may take after its head (within the attempt's time limit). */
export const DRAIN_MS = 1_000;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const TRANSPORT_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding"]);
const encoder = new TextEncoder();

/**
 * Makes one delivery attempt: the URL rule, resolve, judge, connect, (TLS),
 * one HTTP/1.1 `POST`, read the answer's status and headers, drain its body
 * (within 64 KiB and 256 reads with the head), close or keep the
 * connection. Everything happens within `timeoutMs`.
 *
 * @param options what to send and how.
 * @returns the outcome; an attempt that fails is an outcome, not an exception.
 * @throws {TypeError} when the URL is not an absolute http(s) URL, or a header
 *   is not a valid field, or sets what the transport sets (`host`, ...).
 * @throws {RangeError} when `timeoutMs` is not a positive number.
 * @throws the reason of `options.signal` when it aborts the attempt.
 *
 * @example
 * ```ts ignore
 * const body = JSON.stringify(event);
 * const headers = await deliveryHeaders({ secrets, id: event.id, timestampS, body });
 * const result = await deliverOnce({
 *   url, headers, body, timeoutMs: 15000, allowPrivate: false, allowHttp: false,
 * });
 * // { status: 204, error: null, durationMs: 41, address: "203.0.113.7" }
 * ```
 */
export async function deliverOnce(options: DeliverOptions): Promise<DeliveryResult> {
  const url = new URL(options.url);
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TypeError("a webhook URL is http: or https:");
  }
  if (!(options.timeoutMs > 0)) throw new RangeError("timeoutMs must be a positive number");
  const kept = options.connection;
  const request = requestBytes(url, options.headers, options.body, kept !== undefined);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // A failure's outcome, with the address reached or refused when there is one.
  const failed = (error: DeliveryError, address?: string): DeliveryResult => {
    const result: DeliveryResult = { status: null, error, durationMs: elapsed() };
    if (address) result.address = address;
    return result;
  };
  // The URL rule again, as the settings stand now: nothing goes in plain text once refused.
  if (url.protocol === "http:" && !options.allowHttp) {
    return failed("refused_url");
  }
  const deadline = new Deadline(options.timeoutMs, options.signal);
  let conn: Deno.Conn | null = null;
  deadline.signal.addEventListener("abort", () => closeQuietly(conn));
  let address: string | undefined;
  try {
    // Brackets off an IPv6 host: the socket and TLS want the bare address.
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const addresses = isIpLiteral(host)
      ? [host]
      : await deadline.race((options.resolve ?? resolveHost)(host, { signal: deadline.signal }));
    if (addresses.length === 0) return failed("connection");
    if (!options.allowPrivate) {
      const refused = addresses.find((a) => !isIpLiteral(a) || !judgeAddress(a).globallyReachable);
      if (refused !== undefined) return failed("refused_address", refused);
    }
    let answer: { head: ResponseHead; reader: AnswerReader; via: Deno.Conn } | undefined;
    const reused = kept?.take(url.origin, addresses);
    if (reused) {
      const via = conn = reused.conn;
      address = reused.address;
      const reader = readerOf(via, deadline);
      try {
        await writeAll(via, request, deadline).catch((error) => {
          throw deadline.signal.aborted ? error : new Unanswered();
        });
        answer = { head: await reader.head(), reader, via };
      } catch (error) {
        if (deadline.signal.aborted) throw error;
        if (!(error instanceof Unanswered) && reader.received > 0) throw error;
        // Closed by the receiver while kept: the request goes on a new connection.
        closeQuietly(conn);
        conn = null;
        address = undefined;
      }
    }
    if (answer === undefined) {
      const via = conn = await openConnection(
        {
          url,
          host,
          addresses,
          allowPrivate: options.allowPrivate,
          sockets: options.sockets,
          caCerts: options.caCerts,
          connect: options.connect,
        },
        deadline,
        (a) => address = a,
      );
      if (via === null) return failed("connection");
      await writeAll(via, request, deadline);
      const reader = readerOf(via, deadline);
      answer = { head: await reader.head(), reader, via };
    }
    const { head, reader, via } = answer;
    const result: DeliveryResult = {
      status: head.status,
      error: null,
      durationMs: elapsed(),
      address,
    };
    if (head.status >= 300 && head.status < 400) result.error = "redirect";
    const retryAfter = retryAfterOf(head);
    if (retryAfter !== undefined) result.retryAfterS = retryAfter;
    const complete = await drain(reader);
    if (options.keepAnswer) {
      const body = complete ? reader.content() : null;
      if (body !== null) result.body = body;
      const contentType = head.headers.get("content-type");
      if (contentType?.length === 1) result.contentType = contentType[0];
    }
    if (kept && complete && persists(head) && address !== undefined) {
      kept.keep(via, url.origin, address);
      conn = null;
    }
    return result;
  } catch (error) {
    if (deadline.abortedFromOutside) throw options.signal!.reason;
    if (error instanceof RefusedAddress) return failed("refused_address", error.address);
    return failed(deadline.timedOut ? "timeout" : "connection", address);
  } finally {
    deadline.dispose();
    closeQuietly(conn);
  }
}

/** The request's bytes: head and body. */
function requestBytes(
  url: URL,
  headers: Record<string, string>,
  body: string | Uint8Array,
  keepAlive: boolean,
) {
  const bodyBytes = typeof body === "string" ? encoder.encode(body) : body;
  const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`];
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) {
      throw new TypeError(`header ${JSON.stringify(name)} is not a valid field`);
    }
    if (TRANSPORT_HEADERS.has(name.toLowerCase())) {
      throw new TypeError(`header ${name} is set by the delivery itself`);
    }
    lines.push(`${name}: ${value}`);
  }
  lines.push(`content-length: ${bodyBytes.length}`);
  // HTTP/1.1 connections persist unless either side says otherwise.
  if (!keepAlive) lines.push("connection: close");
  lines.push("", "");
  const head = encoder.encode(lines.join("\r\n"));
  const bytes = new Uint8Array(head.length + bodyBytes.length);
  bytes.set(head);
  bytes.set(bodyBytes, head.length);
  return bytes;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array, deadline: Deadline) {
  for (let written = 0; written < bytes.length;) {
    written += await deadline.race(conn.write(bytes.subarray(written)));
  }
}

/** A reader of the answer on `conn`, each read within the deadline. */
function readerOf(conn: Deno.Conn, deadline: Deadline): AnswerReader {
  return new AnswerReader((buffer) => deadline.race(conn.read(buffer)));
}

/**
 * Reads what the answer's body holds, within the limits and {@link DRAIN_MS},
 * so that a well-behaved receiver is not reset mid-write; its bytes are not
 * used. True when the connection can carry the next request.
 */
async function drain(reader: AnswerReader): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => timer = setTimeout(resolve, DRAIN_MS));
  try {
    return await reader.body(late);
  } finally {
    clearTimeout(timer);
  }
}

/** A kept connection that ended, or failed, before any byte of an answer: the receiver closed it. */
class Unanswered extends Error {
  constructor() {
    super("the connection ended before any answer");
  }
}

/** A 429's or 503's single `Retry-After`, in seconds, when it asks for at most an hour. */
function retryAfterOf(head: ResponseHead): number | undefined {
  if (head.status !== 429 && head.status !== 503) return undefined;
  const values = head.headers.get("retry-after");
  if (values?.length !== 1) return undefined;
  const seconds = parseRetryAfter(values[0], Date.now());
  return seconds !== null && seconds <= MAX_RETRY_AFTER_S ? seconds : undefined;
}
