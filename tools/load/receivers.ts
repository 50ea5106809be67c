/**
 * The receivers of `deno task load`: an OTLP/HTTP sink for a server run with
 * telemetry on (`--otel`), and the endpoint idle webhooks point at
 * (`--webhooks N`).
 * @module
 */

/** An OTLP/HTTP receiver that reads each export and answers it, keeping only the byte count. */
export function otlpSink() {
  let bytes = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    bytes += (await request.arrayBuffer()).byteLength;
    // An empty answer is an empty Export…ServiceResponse in either encoding.
    const type = request.headers.get("content-type") ?? "application/json";
    return new Response(type.includes("json") ? "{}" : null, { headers: { "content-type": type } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bytes: () => bytes,
    close: () => server.shutdown(),
  };
}

/** Where the idle endpoints point: answers 204, counts what (never) arrives. */
export function idleReceiver() {
  let received = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    await request.arrayBuffer();
    received++;
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/idle`,
    received: () => received,
    close: () => server.shutdown(),
  };
}

/**
 * Makes `count` endpoints of `intent.expired` only (`POST /webhooks`).
 *
 * @throws {Error} when the service refuses one.
 */
export async function addIdleEndpoints(url: string, token: string, count: number, target: string) {
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${url}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: target, events: ["intent.expired"], description: `idle ${i}` }),
    });
    const text = await response.text();
    if (response.status !== 201) {
      throw new Error(`POST /webhooks answered ${response.status}: ${text}`);
    }
  }
}
