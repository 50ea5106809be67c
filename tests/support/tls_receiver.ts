/**
 * An HTTPS webhook receiver watched at the socket level, for the tests of
 * the delivery paths (docs/interface.md §11): it listens with
 * `Deno.listenTls` (port 443 by default: the tests run as root), records
 * each connection (where from, whether its TLS handshake completed, how
 * many bytes it decrypted from it), and answers each HTTP/1.1 request it
 * reads as a test tells it, keeping the connection for the next one.
 * @module
 */

/** One connection as the receiver saw it. */
export interface SeenConnection {
  /** The client's address and port. */
  from: string;
  /** Whether the TLS handshake completed. */
  handshake: boolean;
  /** Bytes of plaintext read from it: any is an HTTP byte. */
  bytes: number;
  /** Requests read from it. */
  requests: number;
}

/** One request as it arrived. */
export interface SeenRequest {
  method: string;
  path: string;
  /** Header fields, names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** The index of the connection it came on. */
  connection: number;
}

/** A TLS receiver: where it listens, what it saw. */
export interface TlsReceiver {
  port: number;
  connections: SeenConnection[];
  requests: SeenRequest[];
  /** Changes how it answers: the raw text of an answer to a request, or null for none. */
  answer(respond: (request: SeenRequest) => string | null): void;
  close(): Promise<void>;
}

const decoder = new TextDecoder();

/**
 * Holds a lock on a fixed port across the test processes: the files that
 * listen on 443 run in parallel, and the second would find it taken (or get
 * the other's deliveries). Released by closing the file.
 */
async function portLock(port: number): Promise<Deno.FsFile> {
  const path = `${Deno.env.get("TMPDIR") ?? "/tmp"}/intents-test-port-${port}.lock`;
  const file = await Deno.open(path, { read: true, write: true, create: true });
  await file.lock(true);
  return file;
}

/**
 * Starts a receiver that answers `HTTP/1.1 204 No Content` unless told
 * otherwise; on a fixed port (443 unless told), once no other test process
 * holds that port.
 */
export async function startTlsReceiver(
  options: { cert: string; key: string; hostname?: string; port?: number },
): Promise<TlsReceiver> {
  const port = options.port ?? 443;
  const lock = port === 0 ? null : await portLock(port);
  let listener: Deno.TlsListener;
  try {
    listener = Deno.listenTls({
      hostname: options.hostname ?? "127.0.0.1",
      port,
      cert: options.cert,
      key: options.key,
      alpnProtocols: ["http/1.1"],
    });
  } catch (error) {
    lock?.close();
    throw error;
  }
  const connections: SeenConnection[] = [];
  const requests: SeenRequest[] = [];
  const open = new Set<Deno.TlsConn>();
  let respond = (_: SeenRequest): string | null => "HTTP/1.1 204 No Content\r\n\r\n";

  const serve = async (conn: Deno.TlsConn, index: number) => {
    const seen = connections[index];
    try {
      await conn.handshake();
      seen.handshake = true;
      const buffer = new Uint8Array(64 * 1024);
      let pending = "";
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) return;
        seen.bytes += n;
        pending += decoder.decode(buffer.subarray(0, n));
        for (;;) {
          const end = pending.indexOf("\r\n\r\n");
          if (end < 0) break;
          const [requestLine, ...lines] = pending.slice(0, end).split("\r\n");
          const headers: Record<string, string> = {};
          for (const line of lines) {
            const colon = line.indexOf(":");
            headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
          }
          const length = Number(headers["content-length"] ?? 0);
          // Bodies here are ASCII JSON: characters are bytes.
          if (pending.length < end + 4 + length) break;
          const [method, path] = requestLine.split(" ");
          const request = {
            method,
            path,
            headers,
            body: pending.slice(end + 4, end + 4 + length),
            connection: index,
          };
          pending = pending.slice(end + 4 + length);
          requests.push(request);
          seen.requests++;
          const text = respond(request);
          if (text === null) continue;
          const answer = new TextEncoder().encode(text);
          for (let i = 0; i < answer.length;) i += await conn.write(answer.subarray(i));
        }
      }
    } catch {
      // The client went away, or closed before the handshake: recorded as it stood.
    } finally {
      open.delete(conn);
      try {
        conn.close();
      } catch {
        // Closed.
      }
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      const { hostname, port } = conn.remoteAddr;
      connections.push({ from: `${hostname}:${port}`, handshake: false, bytes: 0, requests: 0 });
      open.add(conn);
      void serve(conn, connections.length - 1);
    }
  })().catch(() => {});
  return {
    port: listener.addr.port,
    connections,
    requests,
    answer(next) {
      respond = next;
    },
    async close() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // Closed.
        }
      }
      await accepting;
      lock?.close();
    },
  };
}
