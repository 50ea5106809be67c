/**
 * The request log: one JSON line per request on stdout, written in batches
 * (a write per request would cost a system call each, about a tenth of the
 * server's CPU under load). A process killed outright loses at most the last
 * `flushMs` of lines, never data.
 * @module
 */

/** One line of the request log. */
export interface RequestLogLine {
  time: string;
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  /** On 500s and on 503s of a storage failure: the cause and its causes (never sent). */
  error?: string;
  /** The request's trace and span (W3C ids) when telemetry is on: the line leads to its trace. */
  trace_id?: string;
  span_id?: string;
}

/** Options of {@link createBatchedLog}. */
export interface BatchedLogOptions {
  /** Writes bytes, all of them (e.g. to stdout). Defaults to `Deno.stdout`. */
  write?: (bytes: Uint8Array) => void;
  /** Longest a line waits before it is written. Default 10 ms. */
  flushMs?: number;
  /** Pending characters that trigger a write at once. Default 65,536. */
  maxChars?: number;
}

/** A batched line log. */
export interface BatchedLog {
  log(line: RequestLogLine): void;
  /** Writes every pending line now (at shutdown). */
  flush(): void;
}

function writeAllToStdout(bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += Deno.stdout.writeSync(bytes.subarray(offset));
}

/**
 * Builds a log that writes JSON lines in batches.
 *
 * @example
 * ```ts
 * const requestLog = createBatchedLog({ write: () => {} });
 * // handed to `createApp({ …, log: requestLog.log })`, which logs each request:
 * requestLog.log({
 *   time: new Date().toISOString(),
 *   request_id: "r-1",
 *   method: "GET",
 *   path: "/healthz",
 *   status: 200,
 *   duration_ms: 0.4,
 * });
 * // at shutdown:
 * requestLog.flush();
 * ```
 */
export function createBatchedLog(options: BatchedLogOptions = {}): BatchedLog {
  const { write = writeAllToStdout, flushMs = 10, maxChars = 65_536 } = options;
  const encoder = new TextEncoder();
  let pending = "";
  let timer: ReturnType<typeof setTimeout> | undefined;

  function flush(): void {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (pending === "") return;
    const text = pending;
    pending = "";
    try {
      write(encoder.encode(text));
    } catch {
      // A reader that went away (a closed pipe) must not take the server down
      // with it; the lines are dropped, as console.log would drop them.
    }
  }

  return {
    log(line) {
      pending += JSON.stringify(line) + "\n";
      if (pending.length >= maxChars) flush();
      else if (timer === undefined) timer = setTimeout(flush, flushMs);
    },
    flush,
  };
}
