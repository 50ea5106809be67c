/**
 * One webhook delivery attempt (docs/interface.md §11), safe against DNS rebinding:
 * the host name is resolved here, every address it resolves to is judged
 * (`judgeAddress`), and the connection goes to a judged address, never to
 * the name, so a name that resolves differently a moment later cannot send
 * the request elsewhere. The name still serves for TLS: the certificate is
 * checked against it.
 *
 * The request is written by hand on a `Deno.connect` socket (upgraded with
 * `Deno.startTls` for https) because `fetch` resolves names itself and
 * follows redirects, and offers neither a hook to check the addresses it
 * connects to nor a way to pin one.
 * @module
 */

import { judgeAddress } from "./addresses.ts";
import {
  bodyComplete,
  bodyEnd,
  headEnd,
  parseHead,
  persists,
  type ResponseHead,
} from "./_response_head.ts";
import type { KeptConnection } from "./kept_connection.ts";
import { Deadline } from "./_deadline.ts";
import { isIpLiteral } from "../ip_address.ts";
import { MAX_RETRY_AFTER_S, parseRetryAfter } from "./retry_after.ts";

/** How an attempt failed before or instead of an answer (the `error` of docs/interface.md §11's attempts). */
export type DeliveryError = "timeout" | "connection" | "redirect" | "refused_address";

/** The outcome of one attempt. */
export interface DeliveryResult {
  /** The answer's HTTP status, or `null` when none came. 2xx acknowledges the event. */
  status: number | null;
  /**
   * `null` when an answer came that is not a redirect (which still fails
   * unless 2xx); `"redirect"` for a 3xx (never followed); `"timeout"` when no
   * answer came within `timeoutMs`; `"connection"` when the name did not
   * resolve, no address accepted a connection, TLS failed (certificate
   * included), or the answer was not HTTP/1.x; `"refused_address"` when an
   * address the host is or resolves to is not globally reachable.
   */
  error: DeliveryError | null;
  /** Milliseconds from the start until the answer's head was read, or until the failure. */
  durationMs: number;
  /** For a 429 or 503: the `Retry-After` it carried, in seconds, when it is at most 3600. */
  retryAfterS?: number;
  /** The address connected to, or the address refused (for logs; absent when none was reached). */
  address?: string;
}

/** Resolves a host name to IP address literals (all of them: A and AAAA). */
export type Resolver = (hostname: string, options: { signal: AbortSignal }) => Promise<string[]>;

/** Opens a TCP connection to an IP address literal. */
export type Connector = (options: {
  hostname: string;
  port: number;
  signal: AbortSignal;
}) => Promise<Deno.TcpConn>;

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
  /** How names are resolved; default {@link resolveHost} (`Deno.resolveDns`). For tests. */
  resolve?: Resolver;
  /** How connections are opened; default `Deno.connect`. For tests. */
  connect?: Connector;
  /**
   * Where a connection is kept between attempts (HTTP/1.1 keep-alive): the
   * attempt reuses the one kept there when it goes to the same origin and
   * an address just judged, and leaves its own there when the answer allows
   * it. Without it, each attempt has a connection of its own
   * (`connection: close`).
   */
  connection?: KeptConnection;
  /** PEM certificates trusted besides the platform's roots. For tests. */
  caCerts?: string[];
  /**
   * Ends the attempt early (the process is stopping): the promise then
   * rejects with the signal's reason, and there is no outcome to record.
   */
  signal?: AbortSignal;
}

/** How long an answer's body may take after its head (within the attempt's time limit). */
export const DRAIN_MS = 1_000;

/** The most of an answer read: head and body together. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const TRANSPORT_HEADERS = new Set(["host", "content-length", "connection", "transfer-encoding"]);
const encoder = new TextEncoder();

/**
 * Makes one delivery attempt: resolve, judge, connect, (TLS), one HTTP/1.1
 * `POST`, read the answer's status and headers, drain at most 64 KiB of its
 * body, close. Everything happens within `timeoutMs`.
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
 * const result = await deliverOnce({ url, headers, body, timeoutMs: 15000, allowPrivate: false });
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
    if (addresses.length === 0) return { status: null, error: "connection", durationMs: elapsed() };
    if (!options.allowPrivate) {
      const refused = addresses.find((a) => !isIpLiteral(a) || !judgeAddress(a).globallyReachable);
      if (refused !== undefined) {
        return { status: null, error: "refused_address", durationMs: elapsed(), address: refused };
      }
    }
    let answer: { head: ResponseHead; rest: Uint8Array; via: Deno.Conn } | undefined;
    const reused = kept?.take(url.origin, addresses);
    if (reused) {
      const via = conn = reused.conn;
      address = reused.address;
      try {
        await writeAll(via, request, deadline).catch((error) => {
          throw deadline.signal.aborted ? error : new Unanswered();
        });
        answer = { ...await readHead(via, deadline), via };
      } catch (error) {
        if (deadline.signal.aborted || !(error instanceof Unanswered)) throw error;
        // Closed by the receiver while kept: the request goes on a new connection.
        closeQuietly(conn);
        conn = null;
        address = undefined;
      }
    }
    if (answer === undefined) {
      const via = conn = await open(url, host, addresses, options, deadline, (a) => address = a);
      if (via === null) return { status: null, error: "connection", durationMs: elapsed() };
      await writeAll(via, request, deadline);
      answer = { ...await readHead(via, deadline), via };
    }
    const { head, rest, via } = answer;
    const result: DeliveryResult = {
      status: head.status,
      error: null,
      durationMs: elapsed(),
      address,
    };
    if (head.status >= 300 && head.status < 400) result.error = "redirect";
    const retryAfter = retryAfterOf(head);
    if (retryAfter !== undefined) result.retryAfterS = retryAfter;
    const complete = await drain(via, head, rest, deadline);
    if (kept && complete && persists(head) && address !== undefined) {
      kept.keep(via, url.origin, address);
      conn = null;
    }
    return result;
  } catch {
    if (deadline.abortedFromOutside) throw options.signal!.reason;
    const failure = deadline.timedOut ? "timeout" : "connection";
    return { status: null, error: failure, durationMs: elapsed(), ...(address ? { address } : {}) };
  } finally {
    deadline.dispose();
    closeQuietly(conn);
  }
}

/**
 * Opens a connection to the first of `addresses` that accepts one (TLS for
 * https, checked against the URL's name), or null when none does. The
 * address is told to `connected` as soon as a TCP connection is made.
 *
 * @throws when the deadline passes, or TLS fails (the connection is closed).
 */
async function open(
  url: URL,
  host: string,
  addresses: readonly string[],
  options: DeliverOptions,
  deadline: Deadline,
  connected: (address: string) => void,
): Promise<Deno.Conn | null> {
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  const connect = options.connect ?? connectTcp;
  let tcp: Deno.TcpConn | null = null;
  for (const candidate of addresses) {
    try {
      tcp = await deadline.settle(connect({ hostname: candidate, port, signal: deadline.signal }));
      connected(candidate);
      break;
    } catch (error) {
      if (deadline.signal.aborted) throw error;
    }
  }
  if (tcp === null) return null;
  // Nagle's algorithm would hold the TLS handshake's last flight for the peer's delayed
  // ACK (40 ms on Linux): every message here is complete when written.
  tcp.setNoDelay(true);
  if (url.protocol !== "https:") return tcp;
  const closeOnAbort = () => closeQuietly(tcp);
  deadline.signal.addEventListener("abort", closeOnAbort, { once: true });
  try {
    const tls = await deadline.settle(Deno.startTls(tcp, {
      hostname: host, // the certificate is checked against the URL's name, not the address
      caCerts: options.caCerts,
      alpnProtocols: ["http/1.1"],
      unsafelyDisableHostnameVerification: false,
    }));
    try {
      await deadline.race(tls.handshake());
    } catch (error) {
      closeQuietly(tls);
      throw error;
    }
    return tls;
  } catch (error) {
    closeQuietly(tcp);
    throw error;
  } finally {
    deadline.signal.removeEventListener("abort", closeOnAbort);
  }
}

/**
 * Resolves a name to all its IPv4 and IPv6 addresses with `Deno.resolveDns`
 * (A and AAAA, each following CNAMEs). A type with no records adds none.
 *
 * @throws the resolver's error when a lookup fails otherwise (no server, a
 *   server failure): an attempt must not go on with half an answer hiding the
 *   other half.
 */
export async function resolveHost(
  hostname: string,
  options: { signal?: AbortSignal } = {},
): Promise<string[]> {
  const lookups = await Promise.allSettled(
    (["A", "AAAA"] as const).map((type) =>
      Deno.resolveDns(hostname, type, { signal: options.signal })
    ),
  );
  const addresses: string[] = [];
  for (const lookup of lookups) {
    if (lookup.status === "fulfilled") addresses.push(...lookup.value);
    else if (!(lookup.reason instanceof Deno.errors.NotFound)) throw lookup.reason;
  }
  return addresses;
}

function connectTcp(options: { hostname: string; port: number; signal: AbortSignal }) {
  return Deno.connect({ ...options, transport: "tcp" });
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

/**
 * Reads until a final head has arrived, skipping interim 1xx heads (a 103
 * Early Hints, a stray 100 Continue), but not a 101, which is final here.
 *
 * @throws {SyntaxError} on an answer that is not HTTP/1.x, is too large, or ends early.
 */
async function readHead(conn: Deno.Conn, deadline: Deadline) {
  let buffer: Uint8Array = new Uint8Array(0);
  let total = 0;
  while (true) {
    const end = headEnd(buffer);
    if (end >= 0) {
      const head = parseHead(buffer.subarray(0, end));
      const rest = buffer.subarray(end);
      if (head.status >= 200 || head.status === 101) return { head, rest };
      buffer = rest;
      continue;
    }
    if (total >= MAX_RESPONSE_BYTES) throw new SyntaxError("the response head is too large");
    let chunk: Uint8Array | null;
    try {
      chunk = await readChunk(conn, deadline);
    } catch (error) {
      throw total === 0 && !deadline.signal.aborted ? new Unanswered() : error;
    }
    if (chunk === null && total === 0) throw new Unanswered();
    if (chunk === null) throw new SyntaxError("the connection ended before a response head");
    total += chunk.length;
    buffer = concat(buffer, chunk);
  }
}

/**
 * Reads what the answer's body holds, up to 64 KiB with the head, so that a
 * well-behaved receiver is not reset mid-write; its bytes are not used.
 * Whatever happens here (a timeout, a reset) does not change the outcome:
 * the answer's status is already known. The body gets {@link DRAIN_MS} at
 * most (within the attempt's time): a receiver whose body's end cannot be
 * recognised must not hold its endpoint for the whole time limit.
 *
 * @returns true when exactly the announced body arrived and nothing after
 *   it: the connection can carry the next request.
 */
async function drain(
  conn: Deno.Conn,
  head: ResponseHead,
  rest: Uint8Array,
  deadline: Deadline,
): Promise<boolean> {
  let body = rest;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) =>
    timer = setTimeout(() => resolve("late"), DRAIN_MS)
  );
  try {
    while (!bodyComplete(head, body) && body.length < MAX_RESPONSE_BYTES) {
      const read = readChunk(conn, deadline);
      const chunk = await Promise.race([read, late]);
      if (chunk === "late") {
        // The read in flight ends when the connection is closed (it is not kept).
        read.catch(() => {});
        return false;
      }
      if (chunk === null) return false;
      body = concat(body, chunk);
    }
  } catch {
    // The status is known; the rest of the body is the receiver's business.
    return false;
  } finally {
    clearTimeout(timer);
  }
  return bodyEnd(head, body) === body.length;
}

/** A kept connection that ended, or failed, before any byte of an answer: the receiver closed it. */
class Unanswered extends Error {
  constructor() {
    super("the connection ended before any answer");
  }
}

async function readChunk(conn: Deno.Conn, deadline: Deadline): Promise<Uint8Array | null> {
  const buffer = new Uint8Array(16 * 1024);
  const n = await deadline.race(conn.read(buffer));
  return n === null ? null : buffer.subarray(0, n);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A 429's or 503's single `Retry-After`, in seconds, when it asks for at most an hour. */
function retryAfterOf(head: ResponseHead): number | undefined {
  if (head.status !== 429 && head.status !== 503) return undefined;
  const values = head.headers.get("retry-after");
  if (values?.length !== 1) return undefined;
  const seconds = parseRetryAfter(values[0], Date.now());
  return seconds !== null && seconds <= MAX_RETRY_AFTER_S ? seconds : undefined;
}

function closeQuietly(conn: Deno.Conn | null) {
  try {
    conn?.close();
  } catch {
    // Already closed (by the deadline, or by the peer's TLS alert).
  }
}
