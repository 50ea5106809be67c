/**
 * A new intent's event carries its entry's `R`, computed as it is stored
 * from the request's JCS, written once with its signed object's
 * (docs/interface.md §14); the events of decisions have theirs computed at
 * integration. Either way the log's entries must be the commitments to the
 * records the feed serves, for every kind of submission: each served event's
 * entry is found in the log by its leaf hash, at its index.
 */

import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import { entryBytes, leafHash, multisigSignature } from "../../client/mod.ts";
import type { Intent, Payload } from "../../protocol/types.ts";
import {
  addGoverned,
  approve,
  authorizationOf,
  bodyOf,
  ed25519Signer,
  newSigned,
  passkeySigner,
} from "../support/governed.ts";
import { withApp } from "../support/in_process.ts";
import { sleep } from "../support/time.ts";

const EVENTS_TOKEN = "events-token-0123456789abcdef";

/** Members a record's JCS must sort, escape and renumber exactly as a reader does. */
const ATTRS = {
  fields: {
    z: [1, 2.5, 1e21, { b: null, a: true }],
    "€": 'line\n"quoted" \u2028 \ud83d\ude00',
    "10": 1,
    "9": -0,
    nested: { y: { x: [] }, a: {} },
  },
};

Deno.test("every kind of submission's event is in the log as the feed serves it", async () => {
  await withApp({ env: { EVENTS_TOKEN, ALLOW_UNSIGNED: "true" } }, async (h) => {
    const e1 = ed25519Signer();
    const e2 = ed25519Signer();
    const p = await passkeySigner();
    const template = await h.newTemplate();
    const policy = await h.newPolicy();
    const governed = await addGoverned(h, "policy", authorizationOf([e1, e2], 2));

    const submissions: [string, unknown][] = [];
    const a = newSigned("template", template, { attrs: ATTRS }) as Payload;
    submissions.push(["Variant A, Ed25519", bodyOf(a, await e1.sign(a))]);
    const b = newSigned("policy", policy, { attrs: ATTRS }) as Intent;
    submissions.push(["Variant B, Ed25519", bodyOf(b, await e1.sign(b))]);
    const c = newSigned("policy", policy, { attrs: { fields: { amount: 10 } } }) as Intent;
    submissions.push(["Variant B, Passkey", bodyOf(c, await p.sign(c))]);
    const d = newSigned("template", template) as Payload;
    const multisig = multisigSignature({
      signers: { [e1.key]: 1, [e2.key]: 1 },
      threshold: 2,
      signatures: [await e1.sign(d), await e2.sign(d)] as never,
    });
    submissions.push(["Variant A, Multisig", bodyOf(d, multisig)]);
    const u = newSigned("policy", policy, { attrs: ATTRS }) as Intent;
    submissions.push(["Variant B, Unsigned", bodyOf(u, "Unsigned")]);
    const g = newSigned("policy", governed, { attrs: ATTRS }) as Intent;
    submissions.push(["governed, pending", bodyOf(g, await e1.sign(g))]);
    for (const [name, body] of submissions) {
      const response = await h.submit(body);
      const text = await response.text();
      assert.ok([201, 202].includes(response.status), `${name}: ${text}`);
    }
    await approve(h, g.id, g, e2);

    const headers = { authorization: `Bearer ${EVENTS_TOKEN}` };
    const { events } = await (await h.fetch("/events?limit=100", { headers })).json();
    assert.equal(events.length, submissions.length + 1);
    for (const [index, event] of events.entries()) {
      const leaf = base64urlnopad.encode(leafHash(entryBytes(event.type, event.record)));
      let response = await h.fetch(`/log/proof?leaf=${leaf}`);
      for (let i = 0; i < 100 && response.status === 404; i++) {
        await response.body?.cancel();
        await sleep(50);
        response = await h.fetch(`/log/proof?leaf=${leaf}`);
      }
      const proof = await response.text();
      assert.equal(response.status, 200, `${event.type} ${index}: ${proof}`);
      assert.equal(proof.split("\n")[1], `index ${index}`, proof);
    }
  });
});
