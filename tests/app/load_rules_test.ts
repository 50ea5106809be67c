/**
 * The load tool's `--rules` document (tools/load/rules.ts): the service
 * stores it (each rule within the bounds), and every rule is true for the
 * load's bodies while the intent is still accepted at once.
 */

import assert from "node:assert/strict";
import { MAX_RULE_WHEN_CHARS, MAX_RULES } from "@intents/protocol/bounds";
import { bodyBuilder, webCryptoSigner } from "../../tools/load/bodies.ts";
import { loadRules } from "../../tools/load/rules.ts";
import { withApp } from "../support/in_process.ts";
import { postDocument } from "../support/governed.ts";

Deno.test("the load's rules are stored, all true for its bodies, and accept at once", async () => {
  await withApp({ env: { RATE_LIMIT_PER_ADDRESS: "1000" } }, async (h) => {
    const signer = await webCryptoSigner();
    const rules = loadRules(signer.publicKey);
    assert.equal(rules.length, MAX_RULES);
    for (const rule of rules) {
      assert.ok(
        rule.when.length > MAX_RULE_WHEN_CHARS - 100 && rule.when.length <= MAX_RULE_WHEN_CHARS,
      );
    }
    const authorization = { signers: { [signer.publicKey]: 1 }, threshold: 1, rules };
    for (const variant of ["A", "B"] as const) {
      const kind = variant === "A" ? "template" : "policy";
      const created = await postDocument(h, kind, JSON.stringify({ load: true, authorization }));
      const stored = await created.json();
      assert.equal(created.status, 201, JSON.stringify(stored));
      const build = await bodyBuilder({ variant, kind: "ed25519", origin: "", signer }, stored.id);
      for (const index of [0, 4_321, 99_999]) {
        const response = await h.fetch("/intents/dry-run", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: (await build(index)).body as BodyInit,
        });
        const answer = await response.json();
        assert.equal(response.status, 200, JSON.stringify(answer));
        assert.equal(answer.outcome, "accepted");
        assert.deepEqual(answer.rules, rules.map((_, i) => i));
        assert.equal(answer.approval.threshold, 1);
      }
    }
  });
});
