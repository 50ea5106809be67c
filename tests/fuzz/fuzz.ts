/**
 * The long hostile-input run: the same properties as `tests/e2e/hostile_test.ts`
 * for as many cases as asked, against a fresh server process.
 *
 * ```sh
 * deno task fuzz                          # 50,000 cases, random seed
 * deno task fuzz --runs=200000 --seed=42  # replay or extend a run
 * ```
 *
 * Options: `--runs=N` (mutated valid bodies; random-byte bodies are a fifth
 * of that), `--seed=N`, `--only=random|mutated`, `--path=P` (with `--only`:
 * replay the counterexample path printed by a failure). Prints progress, the
 * server's memory, and on failure the seed and path that replay it. Exits 1
 * on any failure.
 *
 * Memory is judged after warm-up: a fresh server's resident memory grows by
 * 100–160 MiB before it levels off (V8's heaps and the allocator's arenas
 * sized to the load, the verification worker's isolate), so the run fails
 * when the peak of its second half is {@link LATE_GROWTH_LIMIT} or more above
 * the peak of its first half: what a leak does and a warm-up does not.
 * @module
 */

import fc from "fast-check";
import { startServer } from "../support/server.ts";
import { hostileCaseArb, mutate } from "./hostile_cases.ts";
import { checkAnswer } from "./answers.ts";
import { buildValidBody, HOSTILE_SERVER_ENV, makeSigners } from "./valid_bodies.ts";
import { countIntents, makeMarker, postBytes, rssBytes, storeRefs } from "./hostile_http.ts";

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return Deno.args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

function intOption(name: string, fallback: number): number {
  const raw = option(name);
  if (raw === undefined) return fallback;
  if (!/^-?[0-9]+$/.test(raw)) {
    console.error(`fuzz: --${name} must be a whole number`);
    Deno.exit(2);
  }
  return Number(raw);
}

const runs = intOption("runs", 50_000);
const seed = intOption("seed", Math.floor(Math.random() * 2 ** 31));
const path = option("path");
const only = option("only");
/** Largest growth of the server's resident memory from the run's first half to its second. */
const LATE_GROWTH_LIMIT = 64 * 1024 * 1024;

const server = await startServer({ env: HOSTILE_SERVER_ENV });
let failed = false;
try {
  const refs = await storeRefs(server.url, server.adminToken);
  const signers = await makeSigners();
  const marker = makeMarker();
  const baseRss = rssBytes(server.pid) ?? 0;
  let peakRss = baseRss;
  /** The server's resident memory at each progress line. */
  const samples: number[] = [];
  const before = await countIntents(server.url, server.adminToken);
  let accepted = 0;
  let cases = 0;
  const started = performance.now();
  const statuses = new Map<number, number>();

  const progress = () => {
    const rss = rssBytes(server.pid);
    if (rss !== null) {
      peakRss = Math.max(peakRss, rss);
      samples.push(rss);
    }
    const seconds = (performance.now() - started) / 1000;
    const byStatus = [...statuses].sort().map(([s, n]) => `${s}:${n}`).join(" ");
    console.log(
      `fuzz: ${cases} cases in ${seconds.toFixed(0)} s (${(cases / seconds).toFixed(0)}/s), ` +
        `${byStatus}, server RSS ${(rss ?? 0) >> 20} MiB (peak ${peakRss >> 20} MiB)`,
    );
  };
  const count = (status: number) => {
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (++cases % 1000 === 0) progress();
  };

  console.log(`fuzz: seed ${seed}, ${runs} mutated bodies and ${Math.ceil(runs / 5)} random ones`);
  const properties: [string, fc.IAsyncProperty<[unknown]>, number][] = [
    [
      "random",
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 4096 }),
          fc.jsonValue({ maxDepth: 8 }).map((v) => new TextEncoder().encode(JSON.stringify(v))),
        ),
        async (bytes) => {
          const answer = await postBytes(server.url, bytes);
          const problem = checkAnswer(answer, { marker, mustAccept: false, mayAccept: false });
          if (problem) throw new Error(problem);
          count(answer.status);
        },
      ) as fc.IAsyncProperty<[unknown]>,
      Math.ceil(runs / 5),
    ],
    [
      "mutated",
      fc.asyncProperty(hostileCaseArb(marker), async (c) => {
        const body = mutate(await buildValidBody(c.seed, signers, refs), c);
        const answer = await postBytes(server.url, body.bytes);
        const problem = checkAnswer(answer, {
          marker,
          mustAccept: body.pristine,
          mayAccept: body.mayBeValid,
        });
        if (problem) throw new Error(`${c.seed.kind}: ${problem}`);
        if (answer.status === 201) accepted++;
        count(answer.status);
      }) as fc.IAsyncProperty<[unknown]>,
      runs,
    ],
  ];
  for (const [name, property, numRuns] of properties) {
    if (only !== undefined && only !== name) continue;
    const details = await fc.check(property, { numRuns, seed, path });
    if (details.failed) {
      failed = true;
      console.error(`fuzz: ${name} bodies: FAILED (seed ${seed})`);
      console.error(fc.defaultReportMessage(details));
      console.error(
        `replay: deno task fuzz --only=${name} --seed=${seed} --path=${details.counterexamplePath}`,
      );
      break;
    }
    console.log(`fuzz: ${name} bodies: ${details.numRuns} cases passed`);
  }
  progress();
  const after = await countIntents(server.url, server.adminToken);
  if (after !== before + accepted) {
    failed = true;
    console.error(`fuzz: ${after - before} intents stored, but only ${accepted} were accepted`);
  }
  const half = samples.length >> 1;
  const early = Math.max(...samples.slice(0, half));
  const late = Math.max(...samples.slice(half));
  console.log(
    `fuzz: server RSS ${baseRss >> 20} MiB at start, peaks ${early >> 20} MiB in the run's ` +
      `first half and ${late >> 20} MiB in its second`,
  );
  if (half >= 2 && late - early >= LATE_GROWTH_LIMIT) {
    failed = true;
    console.error(`fuzz: server RSS still grew in the run's second half (a leak?)`);
  }
} finally {
  await server.stop();
}
console.log(failed ? "fuzz: FAILED" : "fuzz: passed");
Deno.exit(failed ? 1 : 0);
