/**
 * Cold start: from spawning the server, as Deno Deploy starts it (`deno run
 * -A main.ts`, no flags, `DENO_DEPLOY=true`), to its first answered request
 * (`GET /healthz` answered 200, asked as soon as it says it listens), on a
 * fresh KV file each round.
 *
 * ```sh
 * deno run -A tools/measure/cold_start.ts                 # 10 rounds on this Deno
 * deno run -A tools/measure/cold_start.ts --deno "$(npx --yes deno@2.5.0 eval 'console.log(Deno.execPath())')"
 * ```
 *
 * Options: `--rounds N` (default 10), `--deno PATH` (the Deno binary to run
 * the server with; default: this one).
 * @module
 */

import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnServer } from "../../testing/spawn_server.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";

/** Milliseconds from spawning the server to its first 200 on `/healthz`. */
async function coldStart(deno: string): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "intents-cold-" });
  const started = performance.now();
  const server = await spawnServer({
    deno,
    // As Deno Deploy starts it: no flags.
    flags: [],
    env: {
      DENO_DEPLOY: "true",
      LOG_SIGNING_KEY: generateNoteKey("cold-start.test/intents").signerKey,
      KV_PATH: join(dir, "intents.kv"),
      ADMIN_TOKEN: "cold-start-token-0123456789",
    },
    stdout: "discard",
  });
  try {
    for (;;) {
      const response = await fetch(`${server.url}/healthz`);
      await response.body?.cancel();
      if (response.status === 200) return performance.now() - started;
      if (performance.now() - started > 20_000) throw new Error("no 200 within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string" }, deno: { type: "string" } },
});
const rounds = Number(values.rounds ?? 10);
const deno = values.deno ?? Deno.execPath();
const version = new TextDecoder().decode(
  (await new Deno.Command(deno, { args: ["--version"], stdout: "piped" }).output()).stdout,
).split("\n")[0];
const times: number[] = [];
for (let i = 0; i < rounds; i++) times.push(await coldStart(deno));
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
console.log(
  `${version}: cold start to first answer, ${rounds} rounds: median ${at(0.5).toFixed(0)} ms, ` +
    `min ${times[0].toFixed(0)}, max ${times.at(-1)!.toFixed(0)}`,
);
