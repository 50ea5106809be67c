/**
 * `POST /intents/dry-run` (docs/interface.md §15): the checks of a
 * submission, in the same order, up to the id check; 200 with what the intent
 * would become; nothing stored (the id stays free, no event); the address's
 * budget spent, never a signer's.
 */

import assert from "node:assert/strict";
import { runCli } from "../../client/cli.ts";
import { expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import { until } from "../support/time.ts";
import {
  authorizationOf,
  bodyOf,
  ed25519Signer,
  expectIdFree,
  newSigned,
  postDocument,
} from "../support/governed.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";

function dryRun(h: Harness, body: unknown): Promise<Response> {
  return h.fetch("/intents/dry-run", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function events(h: Harness): Promise<{ type: string; record: { id: string } }[]> {
  const response = await h.fetch("/events?limit=1000", {
    headers: { authorization: `Bearer ${EVENTS_TOKEN}` },
  });
  assert.equal(response.status, 200);
  return (await response.json()).events;
}

Deno.test("POST /intents/dry-run", async (t) => {
  const env = { EVENTS_TOKEN, RATE_LIMIT_PER_SIGNER: "1", RATE_LIMIT_PER_ADDRESS: "1000" };
  await withApp({ env }, async (h) => {
    const [e1, e2] = [ed25519Signer(), ed25519Signer()];
    const authorization = authorizationOf([e1, e2], 1, {
      rules: [
        { when: "intent.attrs.fields.amount > 1000.0", threshold: 2 },
        { when: "intent.attrs.fields.amount > 9000.0", deny: "too much" },
      ],
    });
    const created = await postDocument(h, "policy", JSON.stringify({ authorization }));
    const policy = (await created.json()).id;
    const large = newSigned("policy", policy, { attrs: { fields: { amount: 5000 } } });
    const body = bodyOf(large, await e1.sign(large));

    await t.step("200 with the outcome, the effective quorum and the true rules", async () => {
      // The key's budget is two; dry runs never spend it.
      for (let i = 0; i < 4; i++) {
        const response = await dryRun(h, body);
        const answer = await response.json();
        assert.equal(response.status, 200, JSON.stringify(answer));
        assert.deepEqual(Object.keys(answer).sort(), ["approval", "outcome", "rules"]);
        assert.equal(answer.outcome, "pending");
        assert.deepEqual(answer.rules, [0]);
        assert.equal(answer.approval.threshold, 2);
        assert.deepEqual(answer.approval.signers, { [e1.key]: 1, [e2.key]: 1 });
        assert.deepEqual(answer.approval.approvals.map((a: { key: string }) => a.key), [e1.key]);
        assert.deepEqual(answer.approval.rules, [0]);
      }
      const small = newSigned("policy", policy, { attrs: { fields: { amount: 5 } } });
      const accepted = await (await dryRun(h, bodyOf(small, await e1.sign(small)))).json();
      assert.deepEqual([accepted.outcome, accepted.rules], ["accepted", []]);
    });

    await t.step("stores nothing: the id stays free and no event is written", async () => {
      await expectIdFree(h, large.id as string);
      // The real submission takes the id: nobody took it before.
      const stored = await h.submit(body);
      assert.equal(stored.status, 202);
      let seen: { record: { id: string } }[] = [];
      await until(async () => (seen = await events(h)).length > 0, 2000, "the intent's event");
      assert.deepEqual(seen.map((e) => e.record.id), [large.id]);
      // Once the id is taken, a dry run still answers: it never looks at ids.
      assert.equal((await dryRun(h, body)).status, 200);
    });

    await t.step("refusals are the submission's", async () => {
      const denied = newSigned("policy", policy, { attrs: { fields: { amount: 10000 } } });
      await expectError(
        await dryRun(h, bodyOf(denied, await e1.sign(denied))),
        403,
        "rule_denied",
        {
          mentions: "rules[1]: too much",
        },
      );
      const outsider = ed25519Signer();
      const other = newSigned("policy", policy, { attrs: { fields: { amount: 5 } } });
      await expectError(
        await dryRun(h, bodyOf(other, await outsider.sign(other))),
        403,
        "signer_not_authorized",
      );
      await expectError(await dryRun(h, { payload: {} }), 400, "invalid_body");
      const missing = newSigned("policy", "NoSuchPolicy");
      await expectError(
        await dryRun(h, bodyOf(missing, await e1.sign(missing))),
        400,
        "policy_not_found",
      );
    });

    await t.step("an ungoverned document: accepted, no approval", async () => {
      const template = await h.newTemplate();
      const signed = newSigned("template", template);
      const answer = await (await dryRun(h, bodyOf(signed, await e1.sign(signed)))).json();
      assert.deepEqual(answer, { outcome: "accepted", approval: null, rules: [] });
    });

    await t.step("the client's dryRun and the CLI's submit --dry-run", async () => {
      const tried = await h.client.dryRun(JSON.stringify(body));
      assert.deepEqual([tried.outcome, tried.rules], ["pending", [0]]);
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        (request, info) => h.app.handler(request, info),
      );
      try {
        const out: string[] = [];
        const small = newSigned("policy", policy, { attrs: { fields: { amount: 5000 } } });
        const text = JSON.stringify(bodyOf(small, await e2.sign(small)));
        const code = await runCli(
          ["submit", "-", "--dry-run", "--url", `http://127.0.0.1:${server.addr.port}`],
          {
            stdout: (line) => out.push(line),
            stderr: (line) => out.push(line),
            readStdin: () => Promise.resolve(new TextEncoder().encode(text)),
            env: () => undefined,
          },
        );
        assert.equal(code, 0, out.join(""));
        assert.match(
          out.join(""),
          /would be pending \(weight 1 of 2, rules 0 true\); nothing stored/,
        );
        await expectIdFree(h, small.id as string);
      } finally {
        await server.shutdown();
      }
    });

    await t.step("a GET of /intents/dry-run still reads the intent of that id", async () => {
      const response = await h.fetch("/intents/dry-run", { headers: { authorization: h.auth } });
      await expectError(response, 404, "not_found");
    });
  });
});
