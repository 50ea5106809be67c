/**
 * Cold start: from spawning the server, as Deno Deploy starts it (`deno run
 * -A main.ts`, no flags, `DENO_DEPLOY=true`), to its first answered request
 * (`GET /healthz` answered 200), on a fresh KV file each round.
 *
 * ```sh
 * deno run -A tools/cold_start.ts                 # 10 rounds on this Deno
 * deno run -A tools/cold_start.ts --deno "$(npx --yes deno@2.5.0 eval 'console.log(Deno.execPath())')"
 * ```
 *
 * Options: `--rounds N` (default 10), `--deno PATH` (the Deno binary to run
 * the server with; default: this one).
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Milliseconds from spawning the server to its first 200 on `/healthz`. */
async function coldStart(deno: string, port: number): Promise<number> {
  const dir = await Deno.makeTempDir({ prefix: "intents-cold-" });
  const started = performance.now();
  const child = new Deno.Command(deno, {
    args: ["run", "-A", join(root, "main.ts")],
    cwd: root,
    env: {
      DENO_DEPLOY: "true",
      PORT: String(port),
      HOSTNAME: "127.0.0.1",
      KV_PATH: join(dir, "intents.kv"),
      ADMIN_TOKEN: "cold-start-token-0123456789",
    },
    stdout: "null",
    stderr: "null",
    stdin: "null",
  }).spawn();
  try {
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        await response.body?.cancel();
        if (response.status === 200) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      if (performance.now() - started > 20_000) throw new Error("no answer within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    child.kill("SIGINT");
    await child.status;
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
for (let i = 0; i < rounds; i++) times.push(await coldStart(deno, 18_500 + (i % 50)));
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
console.log(
  `${version}: cold start to first answer, ${rounds} rounds: median ${at(0.5).toFixed(0)} ms, ` +
    `min ${times[0].toFixed(0)}, max ${times.at(-1)!.toFixed(0)}`,
);
