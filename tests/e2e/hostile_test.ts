/**
 * Hostile input over HTTP against the real server process: random bytes and
 * mutated valid bodies of every variant and signature kind. Every answer is
 * below 500 on a connection that stays up, every error is exactly
 * `{message, code}` with a known code and no echo of the input, nothing
 * invalid is stored, and the server's memory stays bounded.
 *
 * Set `FUZZ_SEED` to replay a failing run; `deno task fuzz` runs far more.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { startServer, type TestServer } from "../support/server.ts";
import { hostileCaseArb, mutate } from "../fuzz/hostile_cases.ts";
import { checkAnswer } from "../fuzz/answers.ts";
import {
  buildValidBody,
  HOSTILE_SERVER_ENV,
  makeSigners,
  type Signers,
} from "../fuzz/valid_bodies.ts";
import { countIntents, makeMarker, postBytes, rssBytes, storeRefs } from "../fuzz/hostile_http.ts";

const seed = Deno.env.get("FUZZ_SEED") ? Number(Deno.env.get("FUZZ_SEED")) : undefined;

/** Largest growth of the server's resident memory allowed over a run. */
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;

interface Fixture {
  server: TestServer;
  signers: Signers;
  refs: { templateId: string; policyId: string };
  marker: string;
  peakRss: number;
  baseRss: number;
}

async function withServer(fn: (f: Fixture) => Promise<void>): Promise<void> {
  const server = await startServer({ env: HOSTILE_SERVER_ENV });
  try {
    const refs = await storeRefs(server.url, server.adminToken);
    const baseRss = rssBytes(server.pid) ?? 0;
    await fn({
      server,
      signers: await makeSigners(),
      refs,
      marker: makeMarker(),
      peakRss: baseRss,
      baseRss,
    });
  } finally {
    await server.stop();
  }
}

function sampleRss(f: Fixture): void {
  const rss = rssBytes(f.server.pid);
  if (rss !== null) f.peakRss = Math.max(f.peakRss, rss);
}

function assertRssBounded(f: Fixture): void {
  sampleRss(f);
  if (f.baseRss === 0) return; // no /proc here
  assert.ok(
    f.peakRss - f.baseRss < RSS_GROWTH_LIMIT,
    `server RSS grew from ${f.baseRss >> 20} MiB to ${f.peakRss >> 20} MiB`,
  );
}

Deno.test("random bytes never get a 5xx, a dropped connection or a malformed error", async () => {
  await withServer(async (f) => {
    const before = await countIntents(f.server.url, f.server.adminToken);
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }),
          fc.string({ unit: "binary", maxLength: 512 }).map((s) => new TextEncoder().encode(s)),
          fc.jsonValue({ maxDepth: 6 }).map((v) => new TextEncoder().encode(JSON.stringify(v))),
        ),
        async (bytes) => {
          const answer = await postBytes(f.server.url, bytes);
          const problem = checkAnswer(answer, {
            marker: f.marker,
            mustAccept: false,
            mayAccept: false,
          });
          if (problem) throw new Error(problem);
          if (++cases % 200 === 0) sampleRss(f);
        },
      ),
      { numRuns: 1500, seed, interruptAfterTimeLimit: 15_000 },
    );
    assert.ok(cases >= 200, `only ${cases} cases ran`);
    assert.equal(await countIntents(f.server.url, f.server.adminToken), before);
    assertRssBounded(f);
  });
});

Deno.test(
  "mutated valid bodies of every variant and signature kind are refused cleanly, never stored",
  async () => {
    await withServer(async (f) => {
      const before = await countIntents(f.server.url, f.server.adminToken);
      let accepted = 0;
      let refused = 0;
      let cases = 0;
      const tally = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(hostileCaseArb(f.marker), async (c) => {
          const valid = await buildValidBody(c.seed, f.signers, f.refs);
          const body = mutate(valid, c);
          const answer = await postBytes(f.server.url, body.bytes);
          const problem = checkAnswer(answer, {
            marker: f.marker,
            mustAccept: body.pristine,
            mayAccept: body.mayBeValid,
          });
          if (problem) throw new Error(`${c.seed.kind}: ${problem}`);
          if (answer.status === 201) accepted++;
          if (!body.pristine && body.mayBeValid) {
            tally.set("mayBeValid", (tally.get("mayBeValid") ?? 0) + 1);
          } else refused++;
          const key = `${c.seed.kind} ${answer.status}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
          if (++cases % 200 === 0) sampleRss(f);
        }),
        { numRuns: 4000, seed, interruptAfterTimeLimit: 40_000 },
      );
      if (Deno.env.get("FUZZ_VERBOSE")) {
        console.log([...tally].sort().map(([k, n]) => `${k}: ${n}`).join("\n"));
        console.log(`rss ${f.baseRss >> 20} -> ${f.peakRss >> 20} MiB`);
      }
      assert.ok(cases >= 500, `only ${cases} cases ran`);
      // Each kind was exercised, refused and (unmutated) accepted.
      for (const kind of ["A/Ed25519", "A/Passkey", "A/Multisig", "B/Ed25519", "B/Passkey"]) {
        assert.ok(tally.get(`${kind} 400`), `no refused ${kind} case: ${[...tally]}`);
      }
      assert.ok(accepted > 0 && refused > accepted, `${accepted} accepted, ${refused} refused`);
      // Exactly the accepted bodies were stored: nothing else.
      assert.equal(await countIntents(f.server.url, f.server.adminToken), before + accepted);
      assertRssBounded(f);
    });
  },
);
