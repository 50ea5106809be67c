/**
 * A version before rules (commit `3efe98b`) on a store where this version
 * stored a document with rules: it never takes that document for one that
 * governs nothing; it does not find it (docs/interface.md §15, earlier
 * versions). It refuses such a document sent to it, too.
 *
 * The earlier version is checked out from this repository's history; where
 * the history is not at hand (a shallow clone), the test says so and is ignored.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { KvStore } from "../../src/storage/kv_store.ts";
import { hasCommit, STAGED_COPY_COMMIT, startEarlier } from "../support/earlier_version.ts";
import { authorizationOf, bodyOf, ed25519Signer, newSigned } from "../support/governed.ts";
import { TEST_ADMIN_TOKEN } from "../support/server.ts";

const available = await hasCommit(STAGED_COPY_COMMIT, "earlier_rules_test");

Deno.test({
  name: "a version before rules answers policy_not_found for a document with rules",
  ignore: !available,
  fn: async () => {
    const old = await startEarlier(STAGED_COPY_COMMIT, "file");
    try {
      const signer = ed25519Signer();
      const text = JSON.stringify({
        authorization: authorizationOf([signer], 1, { rules: [{ when: "false", deny: "x" }] }),
      });
      const bytes = new TextEncoder().encode(text);
      const id = base58.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
      // Sent to the earlier version, the document is refused: its authorization does not check.
      const refused = await fetch(`${old.url}/policies`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
          "content-type": "application/json",
        },
        body: text,
      });
      assert.equal(refused.status, 400);
      assert.equal((await refused.json()).code, "invalid_authorization");
      // Stored by this version on the same store, apart.
      const kv = await old.store.open();
      try {
        const stored = await new KvStore(kv).putDocument(
          "policy",
          id,
          { contentType: "application/json", bytes },
          { ruled: true },
        );
        assert.equal(stored, "created");
      } finally {
        kv.close();
      }
      const signed = newSigned("policy", id);
      const answer = await fetch(`${old.url}/intents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(bodyOf(signed, await signer.sign(signed))),
      });
      assert.equal(answer.status, 400);
      assert.equal((await answer.json()).code, "policy_not_found");
      const read = await fetch(`${old.url}/policies/${id}`);
      await read.body?.cancel();
      assert.equal(read.status, 404);
    } finally {
      await old.stop();
    }
  },
});
