/**
 * A C2SP tlog-witness for the service's log, and for any log of signed-note
 * checkpoints with an Ed25519 key: it cosigns (`cosignature/v1`, Ed25519)
 * each checkpoint that extends the last one it cosigned for the log, keeping
 * its state in a Deno KV file of its own (docs/log.md, "Our witness").
 *
 * ```sh
 * deno task witness keygen --name witness.example/w1     # signer key on stdout, vkey on stderr
 * WITNESS_KEY=PRIVATE+KEY+witness.example/w1+… deno task witness serve \
 *   --kv ./data/witness.kv --log example.com/intents+1234abcd+AX… [--log ORIGIN=VKEY] \
 *   [--port 8090] [--hostname 127.0.0.1]
 * ```
 *
 * `serve` answers `POST /add-checkpoint` (and `GET /<hex SHA-256 of the
 * origin>/checkpoint`, the last checkpoint it cosigned), and prints
 * `listening on http://HOST:PORT` once it listens. A log is named by its
 * verifier key (its origin: the key's name) or `ORIGIN=VKEY`.
 * @module
 */

import { hex } from "@scure/base";
import { sha256 } from "@noble/hashes/sha2.js";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { type NoteVerifier, parseVerifierKey } from "../../protocol/log/note.ts";
import { toolOptions } from "../options.ts";
import { addCheckpoint, type WitnessConfig } from "./add_checkpoint.ts";

const options = toolOptions("witness");
const USAGE = "usage: deno task witness keygen --name NAME\n" +
  "       deno task witness serve --kv FILE --log VKEY|ORIGIN=VKEY … [--port N] [--hostname H]\n" +
  "       (the signer key in WITNESS_KEY)";

/** The logs given with `--log`, by origin. */
export function readLogs(values: readonly string[]): Map<string, NoteVerifier> {
  const logs = new Map<string, NoteVerifier>();
  for (const value of values) {
    const split = value.indexOf("=");
    const key = split < 0 ? value : value.slice(split + 1);
    let verifier: NoteVerifier;
    try {
      verifier = parseVerifierKey(key);
    } catch (error) {
      return options.fail(`--log: ${(error as Error).message}`);
    }
    logs.set(split < 0 ? verifier.name : value.slice(0, split), verifier);
  }
  return logs;
}

/**
 * Serves the witness on an open KV until `signal` aborts.
 *
 * @returns the server (its `addr` tells the port).
 */
export function serveWitness(
  kv: Deno.Kv,
  config: WitnessConfig,
  listen: { port: number; hostname: string; signal?: AbortSignal },
): Deno.HttpServer<Deno.NetAddr> {
  const byHash = new Map(
    [...config.logs.keys()].map((o) => [hex.encode(sha256(new TextEncoder().encode(o))), o]),
  );
  return Deno.serve({ ...listen, onListen: () => {} }, async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === "/add-checkpoint") {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      return await addCheckpoint(kv, config, request);
    }
    const read = /^\/([0-9a-f]{64})\/checkpoint$/.exec(pathname);
    const origin = read ? byHash.get(read[1]) : undefined;
    if (request.method === "GET" && origin !== undefined) {
      const { value } = await kv.get<string>(["witness", "checkpoint", origin]);
      if (typeof value === "string") {
        return new Response(value, { headers: { "content-type": "text/plain; charset=utf-8" } });
      }
    }
    return new Response("not found\n", { status: 404 });
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = options.args(argv);
  if (command === "keygen") {
    const values = options.parse(rest, { name: { type: "string" } }, USAGE);
    if (values.name === undefined) options.fail(`--name is required\n${USAGE}`);
    const { signerKey, verifierKey } = generateCosignerKey(values.name!);
    console.log(signerKey);
    console.error(`verifier key: ${verifierKey}`);
    return;
  }
  if (command !== "serve") options.fail(USAGE);
  const values = options.parse(rest, {
    kv: { type: "string" },
    log: { type: "string", multiple: true },
    port: { type: "string" },
    hostname: { type: "string" },
  }, USAGE);
  if (values.kv === undefined || !values.log?.length) {
    options.fail(`--kv and --log are required\n${USAGE}`);
  }
  let cosigner;
  try {
    cosigner = parseCosignerSignerKey(Deno.env.get("WITNESS_KEY") ?? "");
  } catch {
    // Never the key itself: it is a secret.
    options.fail("WITNESS_KEY must be a cosigner signer key (deno task witness keygen)");
  }
  const logs = readLogs(values.log!);
  const kv = await Deno.openKv(values.kv);
  const server = serveWitness(kv, { cosigner: cosigner!, logs }, {
    port: options.int(values.port, "port", 8090, 65535, 0),
    hostname: values.hostname ?? "127.0.0.1",
  });
  console.error(`witness ${cosigner!.verifierKey}`);
  console.log(`listening on http://${server.addr.hostname}:${server.addr.port}`);
  await server.finished;
  kv.close();
}

if (import.meta.main) await main(Deno.args);
