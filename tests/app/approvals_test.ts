/**
 * `GET` and `POST /intents/{id}/approvals` (docs/interface.md §10) against the real
 * server: the view of a pending intent (what every approver signs and its
 * challenge, who has approved), of an accepted or expired one, 404s; every
 * refusal of an approval in the contract's order (415, 413, 400, 404, 409
 * `not_pending`, 400 `invalid_signature`, 403, 409 `already_approved`), each
 * shown to come before the next by a request that would fail both; a
 * recorded approval sent again answered with the view, whatever the state;
 * then approvals by a passkey and an Ed25519 key, the first leaving the
 * intent pending with more weight, the last accepting it. On a KV file and
 * over KV Connect.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { multisigSignature, type Payload, signedBytes, signVariantB } from "../../client/mod.ts";
import { expectError, newIntent } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";
import {
  addGoverned,
  authorizationOf,
  bodyOf,
  challengeOf,
  type DocKind,
  ed25519Signer,
  expectApproval,
  expectMediaTypeThenSize,
  getApprovals,
  getRecord,
  newSigned,
  passkeySigner,
  postApproval,
  rejectChallengeOf,
  type Signer,
} from "../support/governed.ts";
import type { Json } from "../support/record.ts";
import { storeTest } from "../support/stores.ts";
import { sleepUntil } from "../support/time.ts";

const WINDOW_S = 3600;

/** Submits `signed` signed by `by`, expecting `status`; returns the record. */
async function submit(h: Harness, signed: Payload | { id: string }, by: Signer, status = 202) {
  const response = await h.submit(bodyOf(signed as Payload, await by.sign(signed as Payload)));
  const record = await response.json();
  assert.equal(response.status, status, JSON.stringify(record));
  return record as Json & { id: string; received_at: string; approval: Json };
}

// Verified on the serving thread and on a worker: a submission's signature, as verification
// reports it from either, is recognised when sent again as its approval.
for (const workers of ["0", "1"]) {
  const env = { VERIFY_WORKERS: workers };
  const mode = `(VERIFY_WORKERS=${workers})`;
  storeTest(
    `approvals: the view, every refusal in order, then approvals to acceptance ${mode}`,
    async (store, t) => {
      await withApp({ store, env }, async (h) => {
        const e1 = ed25519Signer();
        const p = await passkeySigner({ compressed: true });
        const e2 = ed25519Signer();
        const outsider = ed25519Signer();
        const outsiderPasskey = await passkeySigner();
        // Weights 1, 2, 1 and threshold 4: the submission (1) and the passkey (3) leave it pending.
        const authorization = authorizationOf([e1, p, e2], 4, {
          weights: [1, 2, 1],
          approval_window_s: WINDOW_S,
        });
        const signers = authorization.signers as Record<string, number>;
        const docs: Record<DocKind, string> = {
          template: await addGoverned(h, "template", authorization),
          policy: await addGoverned(h, "policy", authorization),
        };
        const shortPolicy = await addGoverned(h, "policy", {
          ...authorization,
          approval_window_s: 1,
        });
        const plainPolicy = await h.newPolicy();

        // One intent of each state to aim requests at.
        const accepted = newSigned("policy", docs.policy);
        const all = [await e1.sign(accepted), await p.sign(accepted), await e2.sign(accepted)];
        const full = multisigSignature({ signers, threshold: 4, signatures: all });
        assert.equal((await h.submit(bodyOf(accepted, full))).status, 201);
        const expired = newSigned("policy", shortPolicy);
        const expiredRecord = await submit(h, expired, e1);
        const ungoverned = signVariantB(newIntent(plainPolicy), outsider.pair);
        assert.equal((await h.submit(ungoverned)).status, 201);
        const unknownId = crypto.randomUUID();
        const impossible = ["x".repeat(129), "a%00b", "a%0Ab", "%E0%A4%A", "%"];

        await t.step("GET: 404 for no such id, an ungoverned intent, impossible ids", async () => {
          for (const id of [unknownId, "no-such-intent", ungoverned.intent.id, ...impossible]) {
            await expectError(await getApprovals(h, id), 404, "not_found");
          }
        });

        await t.step("GET: an accepted or expired intent shows {id, state} only", async () => {
          const got = await getApprovals(h, accepted.id);
          assert.equal(got.status, 200);
          assert.deepEqual(await got.json(), { id: accepted.id, state: "accepted" });
          await sleepUntil(Date.parse(expiredRecord.approval.expires_at as string) + 50);
          const gone = await getApprovals(h, expired.id);
          assert.equal(gone.status, 200);
          assert.deepEqual(await gone.json(), { id: expired.id, state: "expired" });
        });

        const good = async (signed: Payload | { id: string }) => ({
          signature: await p.sign(signed as Payload),
        });

        await t.step("POST: 415 before 413 before 400 before 404", async () => {
          await expectMediaTypeThenSize(
            (id, body, type) => postApproval(h, id, body, type),
            [unknownId, accepted.id],
            JSON.stringify(await good(accepted)),
          );
          const sig = (await good(accepted)).signature;
          const ed = await e1.sign(accepted);
          const badBodies: [string | Json, string, string][] = [
            ['{"signature":1,"signature":2}', "invalid_json", ""],
            ['{"signature":', "invalid_json", ""],
            [[] as unknown as Json, "invalid_body", ""],
            [{}, "invalid_body", "signature"],
            [{ signature: sig, extra: 1 }, "invalid_body", "extra"],
            [{ signature: "Unsigned" }, "invalid_body", "signature"],
            [{ signature: full }, "invalid_body", "signature.Multisig"],
            [
              { signature: { Ed25519: { ...ed.Ed25519, pub_key: "0OIl" } } },
              "invalid_body",
              "pub_key",
            ],
            [
              {
                signature: {
                  Ed25519: { ...ed.Ed25519, pub_key: base58.encode(new Uint8Array(31)) },
                },
              },
              "invalid_body",
              "signature.Ed25519.pub_key",
            ],
            [
              { signature: { Passkey: { ...sig.Passkey, authenticator_data: "l0" } } },
              "invalid_body",
              "signature.Passkey.authenticator_data",
            ],
            [{ signature: { ...sig, ...ed } }, "invalid_body", "signature"],
          ];
          for (const [body, code, mentions] of badBodies) {
            for (const id of [unknownId, accepted.id, ...impossible]) {
              const response = await postApproval(h, id, body);
              await expectError(response, 400, code, { mentions }).catch((error) => {
                throw new Error(
                  `${id.slice(0, 20)} ${JSON.stringify(body).slice(0, 60)}: ${error}`,
                );
              });
            }
          }
          for (const id of [unknownId, ungoverned.intent.id, ...impossible]) {
            await expectError(await postApproval(h, id, await good(accepted)), 404, "not_found");
          }
        });

        await t.step("POST: 409 not_pending before invalid_signature and 403", async () => {
          for (const id of [accepted.id, expired.id]) {
            const other = newSigned("policy", docs.policy);
            const own = id === accepted.id ? accepted : expired;
            for (const signer of [outsider, e1, p, outsiderPasskey]) {
              // Signed over other bytes, by a signer or not, or correct: the state decides first.
              const bodies = [
                { signature: await signer.sign(other) },
                { signature: await signer.signBytesAgain(signedBytes(own)) },
              ];
              for (const body of bodies) {
                const message = await expectError(
                  await postApproval(h, id, body),
                  409,
                  "not_pending",
                );
                assert.match(message, id === accepted.id ? /accepted/ : /expired/);
              }
            }
          }
        });

        await t.step(
          "POST: a recorded signature again is 200 with the view, whatever the state",
          async () => {
            // The submission's signatures are its approvals: e1, p and e2 signed `accepted`, e1 `expired`.
            const recorded: [Payload | { id: string }, Signer][] = [
              [accepted, e1],
              [accepted, p],
              [accepted, e2],
              [expired, e1],
            ];
            for (const [signed, signer] of recorded) {
              const body = { signature: await signer.sign(signed as Payload) };
              const response = await postApproval(h, signed.id, body);
              assert.equal(response.status, 200);
              const state = signed === accepted ? "accepted" : "expired";
              assert.deepEqual(await response.json(), { id: signed.id, state });
            }
          },
        );

        for (const kind of ["template", "policy"] as const) {
          await t.step(
            `${kind}: a pending intent's view, refusals, then two approvals`,
            async () => {
              const signed = newSigned(kind, docs[kind], {
                attrs: { fields: { amount: 1.5, n: "ü" } },
              });
              const record = await submit(h, signed, e1);
              const expected = {
                threshold: 4,
                signers,
                approvals: [{ key: e1.key, kind: "Ed25519" }],
                windowS: WINDOW_S,
                receivedAt: record.received_at,
              };
              const refName = kind === "template" ? "template_id" : "policy_id";
              // A UUID id is the same intent in any case (stored lower-cased).
              const pathId = kind === "policy" ? signed.id.toUpperCase() : signed.id;
              const view = await (await getApprovals(h, pathId)).json();
              assert.deepEqual(
                Object.keys(view).sort(),
                [
                  "approval",
                  "challenge",
                  "id",
                  "reject_challenge",
                  "signed",
                  "state",
                  "variant",
                  refName,
                ].sort(),
              );
              assert.equal(view.id, signed.id);
              assert.equal(view.state, "pending");
              assert.equal(view.variant, kind === "template" ? "A" : "B");
              assert.equal(view[refName], docs[kind]);
              assert.deepEqual(view.signed, signed);
              assert.equal(view.challenge, await challengeOf(signed));
              assert.equal(view.reject_challenge, await rejectChallengeOf(signed));
              expectApproval(view.approval, expected);
              assert.deepEqual(view.approval, record.approval);

              // invalid_signature comes before 403 and before already_approved.
              const other = newSigned(kind, docs[kind]);
              for (const signer of [outsider, outsiderPasskey, e1, p]) {
                const body = { signature: await signer.sign(other) };
                await expectError(await postApproval(h, signed.id, body), 400, "invalid_signature");
              }
              const wrongOrigin = await p.passkey.assert(new TextEncoder().encode("{}"), {
                origin: "https://elsewhere.example",
              });
              await expectError(
                await postApproval(h, signed.id, { signature: { Passkey: wrongOrigin } }),
                400,
                "invalid_signature",
              );
              for (const signer of [outsider, outsiderPasskey]) {
                const body = { signature: await signer.sign(signed) };
                await expectError(
                  await postApproval(h, signed.id, body),
                  403,
                  "signer_not_authorized",
                );
              }
              // The submission's own signature is its approval: sent again, the view as it stands;
              // another signature of its key is a second decision, refused.
              const replayed = { signature: await e1.sign(signed) };
              const repeat = await postApproval(h, signed.id, replayed);
              assert.equal(repeat.status, 200);
              assert.deepEqual(await repeat.json(), view);
              const second = { signature: await e1.signBytesAgain(signedBytes(signed)) };
              await expectError(await postApproval(h, signed.id, second), 409, "already_approved");

              // The passkey (weight 2): still pending, weight 3.
              const byPasskey = { signature: await p.sign(signed) };
              const afterPasskey = await postApproval(h, pathId, byPasskey);
              assert.equal(afterPasskey.status, 200);
              const pendingView = await afterPasskey.json();
              expected.approvals.push({ key: p.key, kind: "Passkey" });
              expectApproval(pendingView.approval, expected);
              assert.equal(pendingView.approval.weight, 3);
              assert.deepEqual(pendingView, await (await getApprovals(h, signed.id)).json());
              assert.deepEqual({ ...pendingView, approval: view.approval }, view);
              // The approval again is answered with the view as it stands; a fresh assertion of the
              // same passkey is 409.
              const again = await postApproval(h, signed.id, byPasskey);
              assert.equal(again.status, 200);
              assert.deepEqual(await again.json(), pendingView);
              const fresh = { signature: await p.signBytesAgain(signedBytes(signed)) };
              await expectError(await postApproval(h, signed.id, fresh), 409, "already_approved");

              // The second Ed25519 key reaches 4: accepted.
              const last = await postApproval(h, signed.id, { signature: await e2.sign(signed) });
              assert.equal(last.status, 200);
              assert.deepEqual(await last.json(), { id: signed.id, state: "accepted" });
              const stored = await getRecord(h, signed.id);
              assert.equal(stored.state, "accepted");
              // Authorship stays as submitted; the approvals hold all three.
              assert.deepEqual(stored.authorship, record.authorship);
              expected.approvals.push({ key: e2.key, kind: "Ed25519" });
              expectApproval(stored.approval, expected);
              assert.deepEqual({ ...stored, state: "pending", approval: record.approval }, record);
              // Now every new approval is too late; the last one again is answered with the state.
              const late = { signature: await e2.signBytesAgain(signedBytes(signed)) };
              await expectError(await postApproval(h, signed.id, late), 409, "not_pending");
              const lastAgain = await postApproval(h, signed.id, {
                signature: await e2.sign(signed),
              });
              assert.equal(lastAgain.status, 200);
              assert.deepEqual(await lastAgain.json(), { id: signed.id, state: "accepted" });
            },
          );
        }
      });
    },
  );
}
