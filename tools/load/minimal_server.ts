/**
 * The reference the service's throughput is measured against: a server that
 * does only what any correct one must per submission — parse the body, JCS of
 * the signed member, a Web Crypto Ed25519 key import and verify, and one Deno
 * KV atomic commit (id is new; record written). No strict JSON, no schema, no
 * strict-encoding checks, no index, no log line. Variant B Ed25519 only.
 *
 * ```sh
 * deno task load -- --spawn --server tools/load/minimal_server.ts --n 20000 --concurrency 64
 * ```
 *
 * Environment: `PORT` (0: any free port), `HOSTNAME`, `KV_PATH`. Prints
 * `listening on http://HOST:PORT` to stderr like `main.ts`.
 * @module
 */

import canonicalize from "canonicalize";
import { base58 } from "@scure/base";

const kv = await Deno.openKv(Deno.env.get("KV_PATH") || ":memory:");
const encoder = new TextEncoder();

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

async function submit(request: Request): Promise<Response> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const body = JSON.parse(new TextDecoder().decode(bytes));
  const signed = body.authorship.Signed.Ed25519;
  const message = encoder.encode(canonicalize(body.intent)!);
  const key = await crypto.subtle.importKey(
    "raw",
    base58.decode(signed.pub_key) as Uint8Array<ArrayBuffer>,
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const signature = base58.decode(signed.signature) as Uint8Array<ArrayBuffer>;
  const ok = await crypto.subtle.verify("Ed25519", key, signature, message);
  if (!ok) return answer(400, { message: "signature does not verify", code: "invalid_signature" });
  const id = String(body.intent.id).toLowerCase();
  const record = { id, receivedAt: new Date().toISOString(), body: bytes };
  const result = await kv.atomic()
    .check({ key: ["intents", id], versionstamp: null })
    .set(["intents", id], record)
    .commit();
  if (!result.ok) return answer(409, { message: "exists", code: "intent_exists" });
  return answer(201, { id, received_at: record.receivedAt });
}

Deno.serve({
  port: Number(Deno.env.get("PORT") ?? 8000),
  hostname: Deno.env.get("HOSTNAME") ?? "127.0.0.1",
  onListen: ({ hostname, port }) => console.error(`listening on http://${hostname}:${port}`),
}, async (request) => {
  const path = new URL(request.url).pathname;
  if (request.method !== "POST") return answer(405, { message: "POST only", code: "x" });
  // The load tool registers a document first; any id will do here.
  if (path === "/policies" || path === "/templates") return answer(201, { id: "minimal" });
  if (path !== "/intents") return answer(404, { message: "no such resource", code: "not_found" });
  try {
    return await submit(request);
  } catch {
    return answer(400, { message: "bad request", code: "invalid_body" });
  }
});
