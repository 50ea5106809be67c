/**
 * The log's witnesses (docs/interface.md §14) on the whole app: checkpoints
 * sent to our witness (`tools/witness/`) and to an independent one written
 * in Go (`testing/log_go`), each cosigning after checking the consistency
 * proof; a 409 followed; the served checkpoint gated by the quorum; forks (a
 * witness's size above the tree, another root for one of ours) that stop
 * signing while intake goes on; witnesses down, refusing or not knowing the
 * log that never slow intake.
 */

import assert from "node:assert/strict";
import { base64 } from "@scure/base";
import { generateEd25519Key } from "../../client/mod.ts";
import { formatCheckpoint, parseCheckpoint } from "../../protocol/log/checkpoint.ts";
import { verifyCheckpoint } from "../../protocol/log/checkpoint_verify.ts";
import { generateCosignerKey, parseCosignerSignerKey } from "../../protocol/log/cosignature.ts";
import { entryBytes } from "../../protocol/log/entry.ts";
import { leafHash } from "../../protocol/log/hash.ts";
import {
  generateNoteKey,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from "../../protocol/log/note.ts";
import { decodeState, logKeys } from "../../src/log/keys.ts";
import { addCheckpoint } from "../../tools/witness/add_checkpoint.ts";
import { serveWitness } from "../../tools/witness/witness.ts";
import { submitIntents } from "../support/fixtures.ts";
import { buildGoVerifier, HAS_GO, runGoVerifier, startGoWitness } from "../support/go_verifier.ts";
import type { AppHarness } from "../support/in_process.ts";
import { withApp } from "../support/in_process.ts";
import { sleep, until } from "../support/time.ts";
import { freeQuietPort } from "../support/ports.ts";

const ORIGIN = "witness.test/intents";
const { signerKey: LOG_SIGNING_KEY, verifierKey: LOG_KEY } = generateNoteKey(ORIGIN);
const EVENTS_TOKEN = "events-token-0123456789abcdef";
const headers = { authorization: `Bearer ${EVENTS_TOKEN}` };
const key = generateEd25519Key();

/**
 * Our witness on a free loopback port, in this process, with a KV of its own;
 * with `gate`, answering 503 while it is false.
 */
async function ourWitness(name: string, gate?: () => boolean) {
  const { signerKey, verifierKey } = generateCosignerKey(name);
  const kv = await Deno.openKv(":memory:");
  const config = {
    cosigner: parseCosignerSignerKey(signerKey),
    logs: new Map([[ORIGIN, parseVerifierKey(LOG_KEY)]]),
  };
  const server = gate === undefined
    ? serveWitness(kv, config, { port: 0, hostname: "127.0.0.1" })
    : Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen: () => {} },
      (request) =>
        gate()
          ? addCheckpoint(kv, config, request)
          : new Response("down for now\n", { status: 503 }),
    );
  return {
    prefix: `http://127.0.0.1:${server.addr.port}`,
    verifierKey,
    async stop() {
      await server.shutdown();
      kv.close();
    },
  };
}

/** The environment of an app whose log has these witnesses. */
function witnessEnv(witnesses: { prefix: string; verifierKey: string }[], quorum: number) {
  return {
    EVENTS_TOKEN,
    LOG_SIGNING_KEY,
    LOG_ORIGIN: ORIGIN,
    LOG_WITNESSES: witnesses.map((w) => `${w.prefix}=${w.verifierKey}`).join(","),
    LOG_WITNESS_QUORUM: String(quorum),
    LOG_WITNESS_TIMEOUT_MS: "2000",
    LOG_WITNESSES_ALLOW_INSECURE: "true",
  };
}

/** Waits until `check` holds of the served checkpoint's text; the text. */
async function served(h: AppHarness, check: (text: string) => boolean, what: string) {
  for (let i = 0; i < 300; i++) {
    const response = await h.fetch("/log/checkpoint", { headers });
    const text = response.status === 200 ? await response.text() : "";
    if (response.status !== 200) await response.body?.cancel();
    if (text !== "" && check(text)) return text;
    await sleep(50);
  }
  throw new Error(`no served checkpoint ${what}`);
}

const sizeOf = (text: string) => parseCheckpoint(text.slice(0, text.indexOf("\n\n") + 1)).size;

/** The value of a sample of `GET /metrics`, or 0. */
async function sample(h: AppHarness, line: string): Promise<number> {
  const text = await (await h.fetch("/metrics", {
    headers: { authorization: `Bearer ${h.adminToken}` },
  })).text();
  const found = text.split("\n").find((l) => l.startsWith(`${line} `));
  return found === undefined ? 0 : Number(found.slice(line.length + 1));
}

Deno.test({
  name: "two witnesses, ours and Go's, cosign each checkpoint after its consistency proof",
  ignore: !HAS_GO,
  async fn() {
    const program = await buildGoVerifier();
    const goKeys = generateCosignerKey("go.witness.test/w");
    const go = await startGoWitness(program, { logKey: LOG_KEY, witnessKey: goKeys.signerKey });
    const ours = await ourWitness("ours.witness.test/w");
    const witnesses = [ours, { prefix: go.url, verifierKey: goKeys.verifierKey }];
    const policy = { witnesses: witnesses.map((w) => w.verifierKey), quorum: 2 };
    try {
      await withApp({ env: witnessEnv(witnesses, 2) }, async (h) => {
        const id = (await h.client.addPolicy('{"log":"witnesses"}')).id;
        await submitIntents(h.clientWith(), { policyId: id, n: 3, key });
        const first = await served(h, (t) => sizeOf(t) === 3, "of size 3");
        assert.ok(verifyCheckpoint(first, { logKey: LOG_KEY, ...policy }).ok);

        // The next checkpoint goes with a proof from 3; each witness checks it.
        await submitIntents(h.clientWith(), { policyId: id, n: 4, key });
        const second = await served(h, (t) => sizeOf(t) === 7, "of size 7");
        const verdict = verifyCheckpoint(second, { logKey: LOG_KEY, ...policy });
        assert.ok(verdict.ok && verdict.cosigned.length === 2);

        // The log forgets what they cosigned: it sends "old 0", and follows each 409.
        for (const w of witnesses) await h.kv.delete(logKeys.witness(w.verifierKey));
        await submitIntents(h.clientWith(), { policyId: id, n: 2, key });
        const third = await served(h, (t) => sizeOf(t) === 9, "of size 9");
        assert.ok(verifyCheckpoint(third, { logKey: LOG_KEY, ...policy }).ok);
        for (const w of ["ours.witness.test/w", "go.witness.test/w"]) {
          const conflicts = await sample(
            h,
            `intents_log_witness_calls_total{witness="${w}",outcome="conflict"}`,
          );
          assert.ok(conflicts >= 1, w);
        }

        // Go checks both cosignatures and the tree of the feed's entries.
        const { events } = await (await h.fetch("/events?limit=100", { headers })).json();
        const goVerdict = await runGoVerifier(program, {
          verifier_key: LOG_KEY,
          cosigner_keys: policy.witnesses,
          size: 9,
          signed_checkpoint: third,
          inclusion: [],
          consistency: [],
          tiles: [],
          bundles: [],
          tlog_proofs: [],
          origin: ORIGIN,
          entries: events.map((e: { type: string; record: unknown }) =>
            base64.encode(entryBytes(e.type, e.record))
          ),
        });
        assert.ok(goVerdict.ok, goVerdict.err);
      });
    } finally {
      await go.stop();
      await ours.stop();
      await Deno.remove(program.slice(0, program.lastIndexOf("/")), { recursive: true });
    }
  },
});

Deno.test("with a quorum, the served checkpoint is the newest that many witnesses cosigned; witnesses down, refusing or unknown never slow intake", async () => {
  let up = false;
  const witness = await ourWitness("gated.witness.test/w", () => up);
  // One that does not know the log (a configuration error), one where nothing listens.
  const stranger = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    () => new Response("unknown log origin\n", { status: 404 }),
  );
  const closedPort = freeQuietPort();
  const others = [
    {
      prefix: `http://127.0.0.1:${stranger.addr.port}`,
      verifierKey: generateCosignerKey("stranger.witness.test/w").verifierKey,
    },
    {
      prefix: `http://127.0.0.1:${closedPort}`,
      verifierKey: generateCosignerKey("down.witness.test/w").verifierKey,
    },
  ];
  try {
    await withApp({ env: witnessEnv([witness, ...others], 1) }, async (h) => {
      const id = (await h.client.addPolicy('{"log":"quorum"}')).id;
      const started = performance.now();
      await submitIntents(h.clientWith(), { policyId: id, n: 2, key });
      assert.ok(performance.now() - started < 2_000, "intake waits for no witness");
      for (let i = 0; i < 100 && (await h.kv.get(logKeys.checkpoint)).value === null; i++) {
        await sleep(50);
      }
      assert.notEqual((await h.kv.get(logKeys.checkpoint)).value, null);
      const refused = await h.fetch("/log/checkpoint", { headers });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.equal((await refused.json()).code, "unavailable");
      const failed =
        'intents_log_witness_calls_total{witness="gated.witness.test/w",outcome="http_error"}';
      const configuration =
        'intents_log_witness_calls_total{witness="stranger.witness.test/w",outcome="configuration"}';
      const unreachable =
        'intents_log_witness_calls_total{witness="down.witness.test/w",outcome="unreachable"}';
      for (const series of [failed, configuration, unreachable]) {
        for (let i = 0; i < 100 && await sample(h, series) === 0; i++) await sleep(50);
        assert.ok(await sample(h, series) >= 1, series);
      }

      // Up: the checkpoint is cosigned at its next try, and served.
      up = true;
      const first = await served(h, (t) => sizeOf(t) === 2, "of size 2");
      assert.ok(
        verifyCheckpoint(first, { logKey: LOG_KEY, witnesses: [witness.verifierKey], quorum: 1 })
          .ok,
      );

      // Down again: newer checkpoints are signed, and the cosigned one stays served.
      up = false;
      await submitIntents(h.clientWith(), { policyId: id, n: 2, key });
      for (let i = 0; i < 100; i++) {
        const { value } = await h.kv.get<Uint8Array>(logKeys.checkpoint);
        if (value !== null && sizeOf(new TextDecoder().decode(value)) === 4) break;
        await sleep(50);
      }
      assert.equal(sizeOf(await (await h.fetch("/log/checkpoint", { headers })).text()), 2);
      // The integrating process's figures.
      assert.equal(await sample(h, "intents_log_tree_size"), 4);
      assert.equal(await sample(h, "intents_log_fork_alarm"), 0);
    });
  } finally {
    await witness.stop();
    await stranger.shutdown();
  }
});

Deno.test("a witness with a size above the tree is a fork: signing stops everywhere, intake goes on", async () => {
  const { verifierKey } = generateCosignerKey("forked.witness.test/w");
  const liar = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    () =>
      new Response("1000000\n", { status: 409, headers: { "content-type": "text/x.tlog.size" } }),
  );
  const prefix = `http://127.0.0.1:${liar.addr.port}`;
  try {
    await withApp({ env: witnessEnv([{ prefix, verifierKey }], 0) }, async (h) => {
      const id = (await h.client.addPolicy('{"log":"fork"}')).id;
      await submitIntents(h.clientWith(), { policyId: id, n: 2, key });
      // The record is stored, then the process raises its gauge: wait for both.
      for (let i = 0; i < 100 && (await sample(h, "intents_log_fork_alarm")) !== 1; i++) {
        await sleep(50);
      }
      const { value } = await h.kv.get<Uint8Array>(logKeys.fork);
      assert.match(new TextDecoder().decode(value!), /size 1000000, above the log's/);
      assert.equal(await sample(h, "intents_log_fork_alarm"), 1);

      // Intake goes on, and the tree grows; no checkpoint is signed for it. (The last one signed may
      // be of the first intent only: the fork can stop signing before the second is integrated.)
      const signed = sizeOf(await served(h, () => true, "at all"));
      assert.ok(signed >= 1 && signed <= 2, `signed ${signed}`);
      const treeSize = async () => decodeState((await h.kv.get(logKeys.state)).value).size;
      await until(async () => (await treeSize()) === 2, 5_000, "the tree of the first two");
      await submitIntents(h.clientWith(), { policyId: id, n: 3, key });
      await until(async () => (await treeSize()) === 5, 5_000, "the tree of all five");
      await sleep(1_200);
      assert.equal(sizeOf(await (await h.fetch("/log/checkpoint", { headers })).text()), signed);
    });
  } finally {
    await liar.shutdown();
  }
});

Deno.test("a witness that cosigned another tree of ours is a fork: its 422 stops signing", async () => {
  // A split view: the log's key signed a checkpoint of another tree, and our witness cosigned it.
  const witness = await ourWitness("split.witness.test/w");
  const forged = signNote(
    formatCheckpoint({
      origin: ORIGIN,
      size: 1,
      rootHash: leafHash(new TextEncoder().encode("another entry")),
    }),
    [parseSignerKey(LOG_SIGNING_KEY)],
  );
  const seeded = await fetch(`${witness.prefix}/add-checkpoint`, {
    method: "POST",
    body: `old 0\n\n${forged}`,
  });
  assert.equal(seeded.status, 200);
  await seeded.body?.cancel();
  try {
    await withApp({ env: witnessEnv([witness], 0) }, async (h) => {
      const id = (await h.client.addPolicy('{"log":"split"}')).id;
      await submitIntents(h.clientWith(), { policyId: id, n: 2, key });
      for (let i = 0; i < 100 && (await sample(h, "intents_log_fork_alarm")) !== 1; i++) {
        await sleep(50);
      }
      const { value } = await h.kv.get<Uint8Array>(logKeys.fork);
      assert.match(new TextDecoder().decode(value!), /another root for a size of this log/);
      assert.equal(await sample(h, "intents_log_fork_alarm"), 1);
      // Intake goes on.
      assert.equal((await submitIntents(h.clientWith(), { policyId: id, n: 1, key })).length, 1);
    });
  } finally {
    await witness.stop();
  }
});
