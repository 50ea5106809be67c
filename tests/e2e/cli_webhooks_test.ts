/**
 * The CLI's `webhooks` commands as processes against a real server: add,
 * list, get, pause, resume, rotate, replay, attempts, remove, and `webhooks
 * listen`, the local receiver that verifies each delivery and prints it.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { cli, parseJson } from "../support/cli.ts";
import { newPayload } from "../support/fixtures.ts";
import { type ProcessHarness, withProcess } from "../support/process.ts";
import { LOCAL_WEBHOOKS, settled } from "../support/webhooks.ts";
import { sleep } from "../support/time.ts";
import { freeQuietPort } from "../support/ports.ts";

/** `deno task cli webhooks listen` as a process, its output read as it comes. */
function listen(port: number, secret: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "cli", "webhooks", "listen", "--port", String(port), "--secret", secret],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { stdout: "", stderr: "" };
  const decoder = new TextDecoder();
  const read = async (stream: ReadableStream<Uint8Array>, into: "stdout" | "stderr") => {
    for await (const chunk of stream) out[into] += decoder.decode(chunk, { stream: true });
  };
  const done = Promise.all([read(child.stdout, "stdout"), read(child.stderr, "stderr")]);
  return {
    out,
    async until(check: () => boolean, what: string) {
      for (let i = 0; !check(); i++) {
        assert.ok(i < 200, `${what}: ${JSON.stringify(out)}`);
        await sleep(50);
      }
    },
    async stop() {
      child.kill("SIGINT");
      const status = await child.status;
      await done;
      return status.code;
    },
  };
}

async function submit(h: ProcessHarness, template: string) {
  const response = await h.submit(signVariantA(newPayload(template), generateEd25519Key()));
  assert.equal(response.status, 201);
  return (await response.json()).id as string;
}

Deno.test("the webhooks commands manage an endpoint, and listen verifies and prints deliveries", async () => {
  await withProcess({ env: LOCAL_WEBHOOKS }, async (h) => {
    const env = { INTENTS_URL: h.url, ADMIN_TOKEN: h.adminToken };
    const port = freeQuietPort();
    const url = `http://127.0.0.1:${port}/hook`;
    const added = await cli(
      ["webhooks", "add", url, "--events", "intent.accepted", "--description", "dev", "--json"],
      { env },
    );
    assert.equal(added.code, 0, added.stderr);
    const endpoint = parseJson(added);
    const id = endpoint.id as string;
    assert.deepEqual([endpoint.url, endpoint.events, endpoint.description], [
      url,
      ["intent.accepted"],
      "dev",
    ]);
    const receiver = listen(port, endpoint.secret as string);
    try {
      await receiver.until(() => receiver.out.stderr.includes("listening on"), "listen starts");
      const template = await h.newTemplate();
      const first = await submit(h, template);
      await receiver.until(() => receiver.out.stdout.includes(first), "the delivery is printed");
      assert.match(receiver.out.stdout, /^1 .* intent\.accepted .* accepted /m);
      await settled(h.client, id, (e) => e.after === "1");

      const human = await cli(["webhooks", "get", id], { env });
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stdout, /active/);
      assert.match(human.stdout, /delivers after: 1/);
      const listed = await cli(["webhooks", "list"], { env });
      assert.match(listed.stdout, new RegExp(`^${id}  active .* lag 0  ${url}  \\(dev\\)$`, "m"));

      assert.match((await cli(["webhooks", "pause", id], { env })).stdout, /: paused/);
      const second = await submit(h, template);
      await sleep(500);
      assert.ok(!receiver.out.stdout.includes(second), "nothing while paused");
      assert.match((await cli(["webhooks", "resume", id], { env })).stdout, /: active/);
      await receiver.until(() => receiver.out.stdout.includes(second), "delivered once resumed");

      // A new secret: the receiver's (now replaced) secret still verifies for 24 hours.
      const rotated = await cli(["webhooks", "rotate", id], { env });
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.match(rotated.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/);
      assert.match(rotated.stderr, /24 hours/);
      const replayed = await cli(["webhooks", "replay", id, "--after", "start"], { env });
      assert.match(replayed.stdout, /delivers again after the feed's beginning/);
      await receiver.until(
        () => receiver.out.stdout.split(first).length === 3,
        "the first event again after the replay",
      );
      const attempts = await cli(["webhooks", "attempts", id, "--limit", "2", "--json"], { env });
      const items = parseJson(attempts).items as { status: number }[];
      assert.deepEqual(items.map((a) => a.status), [204, 204]);
      const missing = await cli(["webhooks", "replay", id], { env });
      assert.equal(missing.code, 2);
      const unknown = await cli(["webhooks", "get", "wh_00000000000000000000000000000000"], {
        env,
      });
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /not_found/);

      // A leaked secret retired at once: the receiver's secret no longer verifies what comes.
      const bad = await cli(["webhooks", "rotate", id, "--overlap", "-1"], { env });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--overlap/);
      const retired = await cli(["webhooks", "rotate", id, "--overlap", "0"], { env });
      assert.equal(retired.code, 0, retired.stderr);
      assert.match(retired.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/);
      assert.match(retired.stderr, /no longer sign/);
      await submit(h, template);
      await receiver.until(
        () => receiver.out.stderr.includes("no_matching_signature"),
        "a delivery signed only with the new secret",
      );

      assert.match((await cli(["webhooks", "remove", id], { env })).stdout, /removed/);
      assert.match((await cli(["webhooks", "list"], { env })).stdout, /no webhook endpoints/);
    } finally {
      assert.equal(await receiver.stop(), 0);
    }
  });
});

Deno.test("webhooks listen refuses a delivery that does not verify, and the service sends it again", async () => {
  await withProcess({ env: { ...LOCAL_WEBHOOKS, WEBHOOK_RETRY_SCHEDULE_MS: "200" } }, async (h) => {
    const port = freeQuietPort();
    const endpoint = await h.client.webhooks.add({ url: `http://127.0.0.1:${port}/` });
    // Listening with another endpoint's secret.
    const receiver = listen(port, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    try {
      await receiver.until(() => receiver.out.stderr.includes("listening on"), "listen starts");
      await submit(h, await h.newTemplate());
      await receiver.until(
        () => receiver.out.stderr.includes("no_matching_signature"),
        "the refusal is reported",
      );
      assert.equal(receiver.out.stdout, "");
      // Recorded as a failure, once the service has written the attempt down.
      const first = () => h.client.webhooks.attempts(endpoint.id).then((a) => a.at(-1));
      for (let i = 0; (await first()) === undefined; i++) {
        assert.ok(i < 40, "the refused attempt is not recorded within 2 s");
        await sleep(50);
      }
      assert.equal((await first())?.status, 400);
    } finally {
      await receiver.stop();
    }
    const usage = await cli(["webhooks", "listen", "--port", "1", "--secret", "nope"]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--secret/);
  });
});
