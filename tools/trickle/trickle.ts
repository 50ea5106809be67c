/**
 * Measures what a receiver that trickles its answer costs the service: the
 * server's CPU time for one delivery attempt whose answer head (64 KiB by
 * default) is sent one byte per TCP segment (docs/interface.md §11: at most
 * about 50 ms).
 *
 * ```sh
 * deno task trickle -- [--answers 5] [--bytes 65536] [--gap-ms 1] [--root DIR] [--json]
 * ```
 *
 * The tool starts the server (`main.ts` from `--root`, default this
 * checkout, on a temp KV file, plain HTTP and private addresses allowed,
 * retries 50 ms apart), one endpoint whose receiver is a raw TCP listener in
 * this process, and as many intents as answers wanted. To each of the
 * first `--answers` requests the receiver answers `HTTP/1.1 200 OK`, then
 * header lines up to `--bytes` in all, then the empty line, each byte in a
 * write of its own with Nagle's algorithm off (a segment each) and
 * `--gap-ms` after it (so that the server reads it alone; 0: none), until
 * the server closes the connection. The figure is the server's CPU time (user
 * and system, all threads, from /proc in ticks of 10 ms) from the request's
 * arrival to the connection's close, summed over the answers and divided
 * by their number.
 * @module
 */

import { generateEd25519Key, IntentsClient, newIntentId, signVariantA } from "../../client/mod.ts";
import { commitOf, projectRoot, spawnLoadServer } from "../load/spawn.ts";
import { readCpuSeconds } from "../../testing/proc_stats.ts";
import { toolOptions } from "../options.ts";

const options = toolOptions("trickle");
const intOption = options.int;

const USAGE =
  "usage: deno task trickle -- [--answers N] [--bytes B] [--gap-ms G] [--root DIR] [--json]";

function readOptions(args: string[]) {
  const values = options.parse(args, {
    answers: { type: "string" },
    bytes: { type: "string" },
    root: { type: "string" },
    "gap-ms": { type: "string" },
    json: { type: "boolean" },
  }, USAGE);
  return {
    answers: intOption(values.answers, "answers", 5, 20),
    bytes: Math.max(128, intOption(values.bytes, "bytes", 64 * 1024, 1 << 20)),
    root: values.root ?? projectRoot,
    gapMs: values["gap-ms"] === "0" ? 0 : intOption(values["gap-ms"], "gap-ms", 1, 1_000),
    json: values.json === true,
  };
}

/**
 * `HTTP/1.1 200 OK`, `content-length: 0`, `connection: close`, padding
 * fields of at most 100 bytes, and the empty line: `bytes` in all (at least
 * 128).
 */
export function trickledHead(bytes: number): Uint8Array {
  let text = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n";
  // A field line is "x-pad: " + value + CRLF: 9 bytes and its value.
  let room = bytes - text.length - 2;
  while (room > 109) {
    text += `x-pad: ${"a".repeat(91)}\r\n`;
    room -= 100;
  }
  text += `x-pad: ${"a".repeat(room - 9)}\r\n\r\n`;
  return new TextEncoder().encode(text);
}

/** One trickled answer as the receiver saw it. */
interface Trickled {
  cpuMs: number;
  wallMs: number;
  /** Bytes written before the server closed the connection. */
  written: number;
}

/**
 * A raw TCP receiver: trickles `head` to the first `answers` requests, `gapMs`
 * between bytes, then answers 204.
 */
function trickleReceiver(
  head: Uint8Array,
  options: { answers: number; gapMs: number; serverPid: () => number },
) {
  const { answers, gapMs, serverPid } = options;
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done: Trickled[] = [];
  const finished = Promise.withResolvers<void>();
  const serve = async (conn: Deno.TcpConn) => {
    conn.setNoDelay(true);
    try {
      await readRequest(conn);
      if (done.length + 1 > answers) {
        await conn.write(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n"));
        return;
      }
      const cpu0 = readCpuSeconds(serverPid())!;
      const t0 = performance.now();
      let written = 0;
      try {
        for (; written < head.length; written++) {
          await conn.write(head.subarray(written, written + 1));
          if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
      } catch {
        // The server gave up on the answer and closed the connection.
      }
      // Until the server has read what it wants and closed its side.
      const sink = new Uint8Array(1024);
      while (await conn.read(sink).catch(() => null) !== null);
      done.push({
        cpuMs: (readCpuSeconds(serverPid())! - cpu0) * 1000,
        wallMs: performance.now() - t0,
        written,
      });
      if (done.length === answers) finished.resolve();
    } finally {
      try {
        conn.close();
      } catch {
        // Closed.
      }
    }
  };
  void (async () => {
    for await (const conn of listener) void serve(conn).catch(() => {});
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${listener.addr.port}/hook`,
    done,
    finished: finished.promise,
    close: () => listener.close(),
  };
}

/** Reads a request's head and its `content-length` body. */
async function readRequest(conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(64 * 1024);
  let length = 0;
  for (;;) {
    const n = await conn.read(buffer.subarray(length));
    if (n === null) throw new Error("the request ended early");
    length += n;
    const text = new TextDecoder().decode(buffer.subarray(0, length));
    const end = text.indexOf("\r\n\r\n");
    const declared = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
    if (end >= 0 && length >= end + 4 + declared) return;
  }
}

async function main(): Promise<void> {
  const options = readOptions(Deno.args);
  const head = trickledHead(options.bytes);
  const server = await spawnLoadServer({
    script: "main.ts",
    root: options.root,
    batchMax: 32,
    env: {
      WEBHOOKS_ALLOW_HTTP: "true",
      WEBHOOKS_ALLOW_PRIVATE: "true",
      WEBHOOK_TIMEOUT_MS: "120000",
      WEBHOOK_RETRY_SCHEDULE_MS: Array(20).fill("50").join(","),
    },
  });
  const receiver = trickleReceiver(head, {
    answers: options.answers,
    gapMs: options.gapMs,
    serverPid: () => server.pid,
  });
  try {
    const client = new IntentsClient({ url: server.url, token: server.token });
    const { id: template } = await client.addTemplate(JSON.stringify({ trickle: newIntentId() }));
    const key = generateEd25519Key();
    await client.webhooks.add({ url: receiver.url });
    for (let i = 0; i < options.answers; i++) {
      await client.submit(signVariantA({ id: newIntentId(), template_id: template }, key));
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the answers took over 10 minutes")), 600_000);
    });
    await Promise.race([receiver.finished, late]).finally(() => clearTimeout(timer));
    const cpu = receiver.done.reduce((sum, d) => sum + d.cpuMs, 0);
    const round = (ms: number) => Math.round(ms * 10) / 10;
    const figures = {
      commit: await commitOf(options.root),
      answers: options.answers,
      head_bytes: head.length,
      cpu_ms_per_answer: round(cpu / options.answers),
      wall_ms_per_answer: round(
        receiver.done.reduce((sum, d) => sum + d.wallMs, 0) / options.answers,
      ),
      bytes_taken_per_answer: Math.round(
        receiver.done.reduce((sum, d) => sum + d.written, 0) / options.answers,
      ),
    };
    if (options.json) {
      console.log(JSON.stringify(figures));
    } else {
      console.log(
        `${figures.commit ?? options.root}: a ${figures.head_bytes}-byte head, one byte per ` +
          `segment, ${figures.answers} answers: ${figures.cpu_ms_per_answer} ms of server CPU ` +
          `each (${figures.wall_ms_per_answer} ms, ${figures.bytes_taken_per_answer} bytes ` +
          `written before the server closed)`,
      );
    }
  } finally {
    receiver.close();
    await server.stop();
  }
}

if (import.meta.main) await main();
