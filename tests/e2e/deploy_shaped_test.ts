/**
 * The service as Deno Deploy runs it (docs/interface.md §1, §2, §8, §9, §10), on this
 * Deno and on Deno 2.5: instances started with `deno run -A main.ts` and no
 * other flag, `DENO_DEPLOY=true`, sharing one KV Connect store. Under load,
 * round-robin over three instances, the instance a feed consumer streams
 * from is stopped with SIGINT (and would be killed 5 s later) while a new
 * one starts: each stopped instance exits 0 by itself within the 4 s default
 * bound having answered everything in flight, and its stream ends so that
 * the consumer resumes elsewhere. Then an intent is left pending under a
 * governed policy, every instance is stopped before its deadline, and one
 * started after it records the expiry within 5 s of its start. At the end
 * every 201 is in the feed once as `intent.accepted`, the consumer saw the
 * feed exactly as a final pull reads it, and the store passes the audit.
 * Also: Deno 2.5 starts `main.ts` with no flags, and with `DENO_DEPLOY=true`
 * a SIGINT ends its streams and long-polls and stops it within 4 s.
 */

import assert from "node:assert/strict";
import { dirname } from "node:path";
import { generateEd25519Key } from "../../client/mod.ts";
import { auditIntents } from "../support/audit.ts";
import { denoBinary, DEPLOY_DENO } from "../support/deno_versions.ts";
import { FeedFollower, Fleet, KILL_AFTER_MS, startLoad, type Stopped } from "../support/deploy.ts";
import { harnessFor } from "../support/process.ts";
import {
  addGoverned,
  authorizationOf,
  awaitEvent,
  bodyOf,
  ed25519Signer,
  feedEnd,
  newSigned,
  readFeed,
} from "../support/governed.ts";
import { startServer } from "../support/server.ts";
import { openSse } from "../../testing/sse.ts";
import { needsKvConnect, newTestStore } from "../support/stores.ts";
import { sleep, within } from "../support/time.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";

/** `SHUTDOWN_TIMEOUT_MS`' default where `DENO_DEPLOY=true`. */
const DEPLOY_BOUND_MS = 4_000;
const EVENTS_TOKEN = "deploy-events-token-0123456789";
/** The log's key, which every instance where DENO_DEPLOY=true is given. */
const LOG_SIGNING_KEY = generateNoteKey("deploy.test/intents").signerKey;
const INSTANCES = 3;
/** Instances stopped (and replaced) while the load runs. */
const ROTATIONS = 2;
/** Load between two rotations. */
const ROUND_MS = 1_500;
const CONCURRENCY = 6;
/** The governed policy's approval window: short, as the test waits past it. */
const WINDOW_S = 2;
/** docs/interface.md §10: where no instance runs, the expiry is in the feed within 5 s of the next start. */
const EXPIRY_AFTER_START_MS = 5_000;

const keys = Array.from({ length: 8 }, () => generateEd25519Key());

/** An instance stopped by SIGINT: exited by itself, 0, within the bound, everything answered. */
function expectCleanStop(stopped: Stopped): void {
  const { name, code, ms, killed, stderr } = stopped;
  assert.equal(killed, false, `${name} still ran ${KILL_AFTER_MS} ms after SIGINT:\n${stderr}`);
  assert.equal(code, 0, `${name} exited ${code}:\n${stderr}`);
  assert.match(
    stderr,
    new RegExp(`SIGINT: stopping; requests in flight get up to ${DEPLOY_BOUND_MS} ms`),
  );
  assert.match(stderr, /every request was answered/, `${name}:\n${stderr}`);
  assert.ok(ms < DEPLOY_BOUND_MS, `${name} exited ${Math.round(ms)} ms after SIGINT:\n${stderr}`);
}

async function deployShaped(deno: string | undefined): Promise<void> {
  const store = await newTestStore("kv_connect");
  const fleet = new Fleet(store.kvPath, deno, {
    DENO_DEPLOY: "true",
    LOG_SIGNING_KEY,
    DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN")!,
    PORT: "0",
    // Unset as on the platform: the defaults apply.
    VERIFY_WORKERS: "",
    SHUTDOWN_TIMEOUT_MS: "",
    EVENTS_TOKEN,
    EVENTS_KEEPALIVE_MS: "1000",
  });
  let total = Infinity;
  let finished = false;
  const follower = new FeedFollower(fleet, EVENTS_TOKEN);
  let following: Promise<void> | undefined;
  let load: ReturnType<typeof startLoad> | undefined;
  try {
    await Promise.all(Array.from({ length: INSTANCES }, () => fleet.start()));
    const h = harnessFor(fleet.live[0].server);
    const policy = await h.newPolicy();
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const governed = await addGoverned(
      h,
      "policy",
      authorizationOf([e1, e2], 2, { approval_window_s: WINDOW_S }),
    );

    following = follower.run(() => finished || follower.seen.length >= total);
    load = startLoad(fleet, policy, keys, CONCURRENCY);
    const stops: Stopped[] = [];
    const rotated: string[] = [];
    for (let round = 0; round < ROTATIONS; round++) {
      await sleep(ROUND_MS);
      // The instance the consumer streams from is stopped; a new one takes its place.
      const target = await within(follower.reading(), 10_000, "the consumer reading a stream");
      rotated.push(target.name);
      const [stopped] = await Promise.all([fleet.stop(target), fleet.start()]);
      stops.push(stopped);
    }
    await sleep(ROUND_MS);
    const loaded = await load.stop();
    stops.forEach(expectCleanStop);
    assert.deepEqual(loaded.unexpected, []);
    for (const name of rotated) {
      const counts = loaded.perInstance.get(name);
      assert.ok(counts && counts.created > 0, `${name} answered no 201 before its SIGINT`);
    }

    // An intent left pending; every instance stopped before its deadline.
    const pending = newSigned("policy", governed);
    const submitted = await harnessFor(fleet.live[0].server).submit(
      bodyOf(pending, await e1.sign(pending)),
    );
    const record = await submitted.json();
    assert.equal(submitted.status, 202, JSON.stringify(record));
    const deadline = Date.parse(record.approval.expires_at);
    const end = await feedEnd(fleet.live[0].server.url, EVENTS_TOKEN);
    const last = await Promise.all([...fleet.live].map((i) => fleet.stop(i)));
    last.forEach(expectCleanStop);
    assert.ok(Date.now() < deadline, "the instances stopped after the deadline");
    assert.equal(fleet.live.length, 0);

    // Past the deadline, with no instance running, one starts.
    await sleep(deadline + 500 - Date.now());
    const startedAt = Date.now();
    const next = await fleet.start();
    const expired = await awaitEvent(
      next.server.url,
      EVENTS_TOKEN,
      end,
      (e) => e.type === "intent.expired" && e.record.id === pending.id,
      EXPIRY_AFTER_START_MS + 10_000,
    );
    assert.ok(expired, `no intent.expired within 15 s of the start:\n${next.server.stderr()}`);
    const after = expired.seenAt - startedAt;
    assert.ok(
      after <= EXPIRY_AFTER_START_MS,
      `intent.expired read ${after} ms after the start:\n${next.server.stderr()}`,
    );
    assert.equal(expired.event.record.state, "expired");

    // The whole feed, pulled at the end; the consumer catches up with it.
    const feed = await readFeed(next.server.url, EVENTS_TOKEN);
    total = feed.length;
    await within(following, 15_000, `the consumer saw ${follower.seen.length} of ${total} events`);
    const pulled = feed.map((e) => ({ id: e.id, type: e.type, intent: e.record.id }));
    assert.equal(new Set(follower.seen.map((e) => e.id)).size, follower.seen.length, "a repeat");
    assert.deepEqual(follower.seen, pulled, "the consumer saw another sequence than the feed");
    // Its stream ended at each SIGINT of the instance it read from, and it resumed elsewhere.
    const ends = follower.streams.map((s) => `${s.instance}: ${s.end}`);
    assert.ok(follower.streams.length >= ROTATIONS + 2, ends.join(", "));
    for (const stream of follower.streams.slice(0, -1)) {
      assert.equal(stream.end, "ended", ends.join(", "));
    }
    for (let i = 1; i < follower.streams.length; i++) {
      assert.notEqual(follower.streams[i].instance, follower.streams[i - 1].instance, ends.join());
    }

    // Every 201, of every instance, once as intent.accepted; the pending one's life.
    const accepted = new Map<string, number>();
    for (const e of feed) {
      if (e.type === "intent.accepted") {
        accepted.set(e.record.id, (accepted.get(e.record.id) ?? 0) + 1);
      }
    }
    for (const [id, by] of loaded.created) {
      assert.equal(
        accepted.get(id),
        1,
        `${id}, answered 201 by ${by}, is in the feed ${accepted.get(id) ?? 0} times`,
      );
    }
    assert.deepEqual(
      feed.filter((e) => e.record.id === pending.id).map((e) => e.type),
      ["intent.pending", "intent.expired"],
    );

    const kv = await store.open();
    try {
      const intents = await auditIntents(kv);
      const stored = new Set(intents.map((i) => i.id));
      for (const id of loaded.created.keys()) assert.ok(stored.has(id), `${id} is not stored`);
      assert.ok(stored.has(pending.id));
    } finally {
      kv.close();
    }
    const answered = [...loaded.perInstance].map(([n, c]) =>
      `${n} ${c.created} (${c.afterSignal})`
    );
    console.log(
      `201s: ${loaded.created.size} [${answered.join(", ")}]; statuses ${
        JSON.stringify(loaded.statuses)
      }; stops ${[...stops, ...last].map((s) => Math.round(s.ms)).join("/")} ms; ` +
        `expiry ${after} ms after the start; ${follower.streams.length} streams`,
    );
  } finally {
    finished = true;
    await load?.stop();
    await fleet.close();
    await following?.catch(() => {});
    await store.close();
  }
}

Deno.test(
  "Deploy-shaped: instances stopped and started under load, one feed, expiry after a scale to zero [this Deno]",
  needsKvConnect(),
  async () => {
    await deployShaped(undefined);
  },
);

Deno.test(
  `Deploy-shaped: instances stopped and started under load, one feed, expiry after a scale to zero [Deno ${DEPLOY_DENO}]`,
  needsKvConnect(),
  async () => {
    await deployShaped(await denoBinary(DEPLOY_DENO));
  },
);

Deno.test(`Deno ${DEPLOY_DENO} starts main.ts with no flags; with DENO_DEPLOY=true a SIGINT stops it within 4 s`, async () => {
  const deno = await denoBinary(DEPLOY_DENO);
  // The same log key for both starts: a store keeps the log's origin and key.
  const env = { VERIFY_WORKERS: "", EVENTS_TOKEN, LOG_SIGNING_KEY };
  // Without KV_PATH, Deno.openKv()'s default location; here a temp file.
  const plain = await startServer({ deno, flags: [], env });
  let deploy;
  try {
    for (const path of ["/healthz", "/readyz"]) {
      const response = await fetch(`${plain.url}${path}`);
      const text = await response.text();
      assert.equal(response.status, 200, `${path}: ${text}\n${plain.stderr()}`);
    }
    assert.doesNotMatch(plain.stderr(), /Deno\.cron is unavailable/);
    await plain.stop();

    deploy = await startServer({
      deno,
      flags: [],
      kvPath: plain.kvPath,
      env: { ...env, DENO_DEPLOY: "true", SHUTDOWN_TIMEOUT_MS: "" },
    });
    const ready = await fetch(`${deploy.url}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    // An open stream and a long-poll: neither holds the exit.
    const auth = { authorization: `Bearer ${EVENTS_TOKEN}` };
    const stream = await openSse(`${deploy.url}/events`, auth);
    assert.equal(stream.response.status, 200);
    const streamEnded = (async () => {
      for await (const _ of stream.items) { /* the opening comment */ }
    })();
    const poll = fetch(`${deploy.url}/events?wait=30`, { headers: auth });
    await sleep(300);
    const fleet = new Fleet(plain.kvPath, deno, {});
    const instance = { name: "deploy", server: deploy, stopping: false };
    fleet.live.push(instance);
    expectCleanStop(await fleet.stop(instance));
    await streamEnded;
    const polled = await poll;
    assert.equal(polled.status, 200);
    assert.deepEqual((await polled.json()).events, []);
  } finally {
    await plain.stop();
    await deploy?.stop();
    await Deno.remove(dirname(plain.kvPath), { recursive: true });
  }
});
