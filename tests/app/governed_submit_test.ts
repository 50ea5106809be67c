/**
 * `POST /intents` under a governed 2-of-3 document (docs/interface.md §10): one
 * Ed25519 key and two passkeys, weight 1 each, threshold 2. The document, not
 * the caller, fixes the quorum: a co-signer's signature wrapped in a 1-of-1
 * Multisig of enormous weight is 400 `quorum_mismatch`; a key the document
 * does not name is 403 `signer_not_authorized`; both come before the id check
 * and take no id. Below the threshold the intent is stored pending (202),
 * reaching it accepted (201); `Unsigned` follows the document, not
 * `ALLOW_UNSIGNED`.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, multisigSignature } from "../../client/mod.ts";
import { expectError, keyText } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  type DocKind,
  ed25519Signer,
  expectGoverned,
  expectIdFree,
  newSigned,
  passkeySigner,
  type Signer,
} from "../support/governed.ts";
import { base58 } from "@scure/base";

const kinds: DocKind[] = ["template", "policy"];
const WINDOW_S = 3600;
const MAX_SAFE = 9007199254740991;

interface Quorum {
  e: Signer;
  p1: Signer & { passkey: { publicKey: Uint8Array } };
  p2: Signer & { passkey: { publicKey: Uint8Array } };
  signers: Record<string, number>;
  docs: Record<DocKind, string>;
}

/** E (Ed25519), P1 (passkey) and P2 (passkey, named compressed by the document); 2 of 3. */
async function quorum(h: Harness): Promise<Quorum> {
  const e = ed25519Signer();
  const p1 = await passkeySigner();
  const p2 = await passkeySigner({ compressed: true });
  const authorization = authorizationOf([e, p1, p2], 2, { approval_window_s: WINDOW_S });
  return {
    e,
    p1,
    p2,
    signers: authorization.signers as Record<string, number>,
    docs: {
      template: await addGoverned(h, "template", authorization),
      policy: await addGoverned(h, "policy", authorization),
    },
  };
}

/** The key a passkey's assertion carries: its uncompressed point. */
const pointOf = (s: { passkey: { publicKey: Uint8Array } }) => base58.encode(s.passkey.publicKey);

Deno.test("POST /intents under a governed 2-of-3 document", async (t) => {
  await withApp({}, async (h) => {
    const q = await quorum(h);
    const { e, p1, p2 } = q;

    await t.step(
      "a co-signer wrapped as a 1-of-1 Multisig of weight 2^53−1: 400, no id",
      async () => {
        for (const kind of kinds) {
          const signed = newSigned(kind, q.docs[kind]);
          const lone = await p1.sign(signed);
          const wrapped = multisigSignature({
            signers: { [pointOf(p1)]: MAX_SAFE },
            threshold: MAX_SAFE,
            signatures: [lone],
          });
          await expectError(await h.submit(bodyOf(signed, wrapped)), 400, "quorum_mismatch", {
            mentions: "pub_key",
          });
          // Other descriptors that are not the document's: a threshold, a weight, a signer off.
          const near: Record<string, number>[] = [
            { [e.key]: 1, [pointOf(p1)]: 1, [p2.key]: 2 },
            { [e.key]: 1, [pointOf(p1)]: 1 },
            { [e.key]: 1, [pointOf(p1)]: 1, [p2.key]: 1, [keyText(generateEd25519Key())]: 1 },
          ];
          const both = [await e.sign(signed), lone];
          for (const signers of near) {
            const body = bodyOf(
              signed,
              multisigSignature({ signers, threshold: 2, signatures: both }),
            );
            await expectError(await h.submit(body), 400, "quorum_mismatch");
          }
          const lowered = multisigSignature({ signers: q.signers, threshold: 1, signatures: both });
          await expectError(await h.submit(bodyOf(signed, lowered)), 400, "quorum_mismatch");
          await expectIdFree(h, signed.id);
          // The real 2-of-3 then takes the id; P2 named uncompressed is the same point.
          const real = multisigSignature({
            signers: { [e.key]: 1, [pointOf(p1)]: 1, [pointOf(p2)]: 1 },
            threshold: 2,
            signatures: both,
          });
          const body = bodyOf(signed, real);
          await expectGoverned(h, await h.submit(body), body, {
            status: 201,
            state: "accepted",
            kind: "Multisig",
            authors: [e.key, pointOf(p1)],
            approval: {
              threshold: 2,
              signers: q.signers,
              approvals: [{ key: e.key, kind: "Ed25519" }, { key: p1.key, kind: "Passkey" }],
              windowS: WINDOW_S,
            },
          });
        }
      },
    );

    await t.step("an outsider's key: 403, no id; before the id check", async () => {
      const outsiders = [ed25519Signer(), await passkeySigner()];
      for (const kind of kinds) {
        const signed = newSigned(kind, q.docs[kind]);
        for (const outsider of outsiders) {
          const body = bodyOf(signed, await outsider.sign(signed));
          await expectError(await h.submit(body), 403, "signer_not_authorized");
        }
        await expectIdFree(h, signed.id);
        const taken = await h.submit(bodyOf(signed, await e.sign(signed)));
        assert.equal(taken.status, 202);
        await taken.body?.cancel();
        // Now the id exists: an outsider, or a descriptor not the document's, learns nothing.
        for (const outsider of outsiders) {
          const body = bodyOf(signed, await outsider.sign(signed));
          await expectError(await h.submit(body), 403, "signer_not_authorized");
        }
        const wrapped = multisigSignature({
          signers: { [e.key]: MAX_SAFE },
          threshold: MAX_SAFE,
          signatures: [await e.sign(signed)],
        });
        await expectError(await h.submit(bodyOf(signed, wrapped)), 400, "quorum_mismatch");
      }
    });

    await t.step("a Multisig equal to the quorum with two signatures: 201 accepted", async () => {
      for (const kind of kinds) {
        const signed = newSigned(kind, q.docs[kind], { attrs: { fields: { amount: 7 } } });
        const signatures = [await p2.sign(signed), await e.sign(signed)];
        const body = bodyOf(
          signed,
          multisigSignature({ signers: q.signers, threshold: 2, signatures }),
        );
        await expectGoverned(h, await h.submit(body), body, {
          status: 201,
          state: "accepted",
          kind: "Multisig",
          // A Multisig names its signers as its descriptor writes them (§4).
          authors: [p2.key, e.key],
          approval: {
            threshold: 2,
            signers: q.signers,
            approvals: [{ key: p2.key, kind: "Passkey" }, { key: e.key, kind: "Ed25519" }],
            windowS: WINDOW_S,
          },
        });
      }
    });

    await t.step("a Multisig below the threshold is 202 pending, not §4's 400", async () => {
      for (const kind of kinds) {
        const signed = newSigned(kind, q.docs[kind]);
        const signatures = [await p1.sign(signed)];
        const body = bodyOf(
          signed,
          multisigSignature({ signers: q.signers, threshold: 2, signatures }),
        );
        await expectGoverned(h, await h.submit(body), body, {
          status: 202,
          state: "pending",
          kind: "Multisig",
          authors: [pointOf(p1)],
          approval: {
            threshold: 2,
            signers: q.signers,
            approvals: [{ key: p1.key, kind: "Passkey" }],
            windowS: WINDOW_S,
          },
        });
      }
    });

    await t.step(
      "one signature: 202 pending with Location; the id is taken (200, 409)",
      async () => {
        for (const kind of kinds) {
          for (const signer of [e, p2]) {
            const signed = newSigned(kind, q.docs[kind], { attrs: { fields: { n: [1, "two"] } } });
            const body = bodyOf(signed, await signer.sign(signed));
            const record = await expectGoverned(h, await h.submit(body), body, {
              status: 202,
              state: "pending",
              kind: signer.kind,
              // Authorship is as submitted (the point the assertion carries); the approval
              // names the key as the document writes it.
              authors: [signer === p2 ? pointOf(p2) : e.key],
              approval: {
                threshold: 2,
                signers: q.signers,
                approvals: [{ key: signer.key, kind: signer.kind }],
                windowS: WINDOW_S,
              },
            });
            assert.equal((record.approval as { weight: number }).weight, 1);
            // The same body again replays it, still pending; another submission of the id,
            // however complete, is 409.
            const replayed = await h.submit(body);
            assert.equal(replayed.status, 200);
            assert.equal(replayed.headers.get("idempotent-replayed"), "true");
            assert.deepEqual(await replayed.json(), record);
            const complete = multisigSignature({
              signers: q.signers,
              threshold: 2,
              signatures: [await e.sign(signed), await p1.sign(signed)],
            });
            for (const again of [bodyOf(signed, await p1.sign(signed)), bodyOf(signed, complete)]) {
              await expectError(await h.submit(again), 409, "intent_exists");
            }
          }
        }
      },
    );

    await t.step("the default approval window is 604800 s", async () => {
      const authorization = authorizationOf([e, p1], 2);
      const policy = await addGoverned(h, "policy", authorization);
      const signed = newSigned("policy", policy);
      const body = bodyOf(signed, await p1.sign(signed));
      await expectGoverned(h, await h.submit(body), body, {
        status: 202,
        state: "pending",
        kind: "Passkey",
        authors: [pointOf(p1)],
        approval: {
          threshold: 2,
          signers: authorization.signers as Record<string, number>,
          approvals: [{ key: p1.key, kind: "Passkey" }],
          windowS: 604800,
        },
      });
    });
  });
});

/** Submits an `Unsigned` intent under `policy` and returns the answer. */
function submitUnsigned(h: Harness, policy: string) {
  const signed = newSigned("policy", policy);
  return { signed, response: h.submit(bodyOf(signed, "Unsigned")) };
}

for (const allow of ["false", "true"]) {
  Deno.test(`Unsigned under governed documents follows the document (ALLOW_UNSIGNED=${allow})`, async () => {
    await withApp({ env: { ALLOW_UNSIGNED: allow } }, async (h) => {
      const e = ed25519Signer();
      const p = await passkeySigner();
      for (const extra of [{}, { unsigned: false }]) {
        const policy = await addGoverned(h, "policy", authorizationOf([e, p], 2, extra));
        const { signed, response } = submitUnsigned(h, policy);
        await expectError(await response, 400, "unsigned_not_permitted");
        await expectIdFree(h, signed.id);
        // Before the id check: once the id is taken, still 400, not 409.
        const taken = await h.submit(bodyOf(signed, await e.sign(signed)));
        assert.equal(taken.status, 202);
        await taken.body?.cancel();
        await expectError(
          await h.submit(bodyOf(signed, "Unsigned")),
          400,
          "unsigned_not_permitted",
        );
      }
      const authorization = authorizationOf([e, p], 2, { unsigned: true, approval_window_s: 60 });
      const policy = await addGoverned(h, "policy", authorization);
      const { signed, response } = submitUnsigned(h, policy);
      const body = bodyOf(signed, "Unsigned");
      await expectGoverned(h, await response, body, {
        status: 201,
        state: "accepted",
        kind: "Unsigned",
        authors: [],
        approval: {
          threshold: 2,
          signers: authorization.signers as Record<string, number>,
          approvals: [],
          windowS: 60,
        },
      });
      await expectError(await h.submit(body), 409, "intent_exists");
      // A signed intent under the same document is still held to its quorum.
      const other = newSigned("policy", policy);
      const refused = await h.submit(bodyOf(other, await ed25519Signer().sign(other)));
      await expectError(refused, 403, "signer_not_authorized");
    });
  });
}
