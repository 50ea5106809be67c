/**
 * Where deliveries may go (docs/interface.md §11) against a real server: address
 * literals that are not globally reachable are refused at creation, and a
 * name is resolved at each attempt, so a name that resolves to a private
 * address then (here `localhost`, to the receiver's own loopback address)
 * fails with `refused_address` without a connection, until the endpoint is
 * disabled. With `WEBHOOKS_ALLOW_PRIVATE=true` the same endpoint is reached.
 * The URL rule is applied again at each attempt: an `http:` endpoint gets
 * nothing once plain HTTP is no longer allowed (`refused_url`).
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { expectError, newPayload } from "../support/fixtures.ts";
import { sampleValue, scrape } from "../support/metrics.ts";
import { type ProcessHarness, withProcess } from "../support/process.ts";
import { tempKvPath } from "../support/server.ts";
import { acknowledged, settled, startReceiver } from "../support/webhooks.ts";
import { sleep } from "../support/time.ts";

Deno.test("a name that resolves to a loopback address at attempt time is refused without a connection", async () => {
  const receiver = startReceiver();
  const url = `http://localhost:${receiver.port}/hook`;
  const env = {
    WEBHOOKS_ALLOW_HTTP: "true",
    WEBHOOKS_ALLOW_PRIVATE: "false",
    WEBHOOK_RETRY_SCHEDULE_MS: "100,100",
  };
  try {
    await withProcess({ env }, async (h) => {
      // Literals are judged at once, every kind of them.
      for (
        const literal of [
          `http://127.0.0.1:${receiver.port}/hook`,
          `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
          `http://[::1]:${receiver.port}/hook`,
          "http://169.254.169.254/latest/meta-data",
          "http://[fd12::1]/hook",
        ]
      ) {
        const response = await h.fetch("/webhooks", {
          method: "POST",
          headers: { authorization: h.auth, "content-type": "application/json" },
          body: JSON.stringify({ url: literal }),
        });
        await expectError(response, 400, "invalid_webhook_url", { mentions: "globally reachable" });
      }
      // A name passes the rule; what it resolves to is judged at each attempt.
      const endpoint = await h.client.webhooks.add({ url });
      const template = await h.newTemplate();
      const submitted = await h.submit(signVariantA(newPayload(template), generateEd25519Key()));
      assert.equal(submitted.status, 201);
      await submitted.body?.cancel();
      for (let i = 0; (await h.client.webhooks.get(endpoint.id)).status === "active"; i++) {
        assert.ok(i < 100, "not disabled within 5 s");
        await sleep(50);
      }
      const attempts = await h.client.webhooks.attempts(endpoint.id);
      assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.error]), [
        [3, null, "refused_address"],
        [2, null, "refused_address"],
        [1, null, "refused_address"],
      ]);
      assert.equal(receiver.deliveries.length, 0, "no request reached the receiver");
      const shown = await h.client.webhooks.get(endpoint.id);
      assert.deepEqual([shown.status, shown.disabled_reason], ["disabled", "failing"]);
      const samples = await scrape(h);
      assert.equal(
        sampleValue(samples, "intents_webhook_deliveries_total", { outcome: "refused_address" }),
        3,
      );
      // The count by status follows once the deliverer has let the disabled endpoint go.
      for (let i = 0;; i++) {
        const disabled = { status: "disabled" };
        if (sampleValue(await scrape(h), "intents_webhook_endpoints", disabled) === 1) break;
        assert.ok(i < 40, "the disabled endpoint is not counted within 2 s");
        await sleep(50);
      }
    });
    // The same name, where the operator allows private addresses: delivered.
    await withProcess({ env: { ...env, WEBHOOKS_ALLOW_PRIVATE: "true" } }, async (h) => {
      await h.client.webhooks.add({ url });
      const template = await h.newTemplate();
      const submitted = await h.submit(signVariantA(newPayload(template), generateEd25519Key()));
      await submitted.body?.cancel();
      await receiver.until((d) => acknowledged(d).length === 1, 5_000, "the delivery");
    });
  } finally {
    await receiver.close();
  }
});

Deno.test("an http: endpoint registered while plain HTTP was allowed gets nothing once it is not: refused_url, retried as any failure", async () => {
  const receiver = startReceiver();
  const kvPath = await tempKvPath();
  const env = {
    WEBHOOKS_ALLOW_PRIVATE: "true",
    WEBHOOK_RETRY_SCHEDULE_MS: "100,100",
  };
  const submitOne = async (h: ProcessHarness) => {
    const template = await h.newTemplate();
    const submitted = await h.submit(signVariantA(newPayload(template), generateEd25519Key()));
    assert.equal(submitted.status, 201);
    await submitted.body?.cancel();
  };
  try {
    let id = "";
    await withProcess(
      { store: kvPath, env: { ...env, WEBHOOKS_ALLOW_HTTP: "true" } },
      async (h) => {
        id = (await h.client.webhooks.add({ url: receiver.url })).id;
        await submitOne(h);
        await receiver.until((d) => acknowledged(d).length === 1, 5_000, "the delivery");
      },
    );
    await withProcess(
      { store: kvPath, env: { ...env, WEBHOOKS_ALLOW_HTTP: "false" } },
      async (h) => {
        await submitOne(h);
        const shown = await settled(h.client, id, (e) => e.status === "disabled", 5_000);
        assert.equal(shown.disabled_reason, "failing", "disabled as after any failures");
        const attempts = await h.client.webhooks.attempts(id);
        assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.error]), [
          [3, null, "refused_url"],
          [2, null, "refused_url"],
          [1, null, "refused_url"],
          [1, 204, null],
        ]);
        assert.equal(receiver.deliveries.length, 1, "nothing more in plain text");
        const samples = await scrape(h);
        assert.equal(
          sampleValue(samples, "intents_webhook_deliveries_total", { outcome: "refused_url" }),
          3,
        );
      },
    );
  } finally {
    await receiver.close();
  }
});
