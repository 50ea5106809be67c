/**
 * The passkey page says no (docs/interface.md §10), end to end in headless Chromium:
 * beside "Approve", a "Reject" button signs the rejection bytes with a
 * passkey registered through the page; the page says what was rejected and
 * what that did (still pending while the others can reach the threshold,
 * rejected once they cannot), and the real server records it.
 *
 * Set `UPDATE_SCREENSHOTS=1` to write docs/screenshots/passkey-reject.png and
 * passkey-rejected-intent.png.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import { generateEd25519Key, type Payload, signVariantA } from "../../client/mod.ts";
import {
  adminRecord,
  approveWith,
  governedTemplate,
  listedKeys,
  openApproval,
  post,
  quorum,
  rejectWith,
  unexpected,
} from "../support/approval_page.ts";
import {
  explain,
  ignore,
  registerPasskey,
  screenshot,
  text,
  withPage,
} from "../support/passkey_page.ts";

const options = { ignore, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...options,
  name: "two passkeys reject through the page: still pending after one, rejected after the other",
  async fn() {
    await withPage(async ({ server, page, origin, problems }) => {
      await registerPasskey(page, "Laptop");
      await registerPasskey(page, "Phone");
      const [laptop, phone] = await listedKeys(page);
      const ed = generateEd25519Key();
      const edKey = base58.encode(ed.publicKey);
      const other = base58.encode(generateEd25519Key().publicKey);
      // Weight 1 each, threshold 3 of 4: without Laptop three remain; without Phone too, two.
      const templateId = await governedTemplate(server, {
        signers: { [edKey]: 1, [laptop]: 1, [phone]: 1, [other]: 1 },
        threshold: 3,
      });
      const payload: Payload = {
        id: "order-reject-1",
        template_id: templateId,
        attrs: { fields: { amount: "9000.00", to: "mallory" } },
      };
      const submitted = await post(server, signVariantA(payload, ed));
      assert.equal(submitted.status, 202);
      await submitted.body?.cancel();

      assert.equal(await openApproval(page, origin, payload.id), "pending");
      assert.equal(await page.evaluate("document.getElementById('reject-button').hidden"), false);
      assert.match(await text(page, "approve-reject-challenge"), /^[A-Za-z0-9_-]{43}$/);

      const first = await rejectWith(page, "Laptop");
      assert.equal(first.state, "pending", explain(first, server));
      assert.equal(
        first.summary,
        `Rejected by “Laptop”: intent ${payload.id} (template_id ${templateId}) stays pending, ` +
          "weight 1 of 3; the signers who have not rejected can still reach the threshold.",
      );
      const rows = await quorum(page);
      assert.match(rows[1].approved, /^✗ rejected \(Passkey\) at /);
      assert.equal(rows[2].approved, "not yet");
      assert.equal(await text(page, "approve-weight"), "Weight 1 of 3 reached. 1 rejected.");
      await screenshot(page, "passkey-reject.png");

      // Laptop has decided: approving now is refused by the service.
      const turn = await approveWith(page, "Laptop");
      assert.equal(turn.state, "rejected", turn.summary);
      assert.match(turn.summary, /^409 already_rejected: /);

      const last = await rejectWith(page, "Phone");
      assert.equal(last.state, "intent-rejected", explain(last, server));
      assert.equal(
        last.summary,
        `Rejected by “Phone”: intent ${payload.id} (template_id ${templateId}) is rejected; ` +
          "it can no longer be accepted.",
      );
      assert.deepEqual(JSON.parse(last.body), { id: payload.id, state: "rejected" });
      assert.equal(
        await page.evaluate("document.getElementById('approve-section').dataset.state"),
        "rejected",
      );
      assert.match(await text(page, "approve-status"), /^This intent is rejected/);
      assert.ok(await page.evaluate("document.getElementById('approve-actions').hidden"));
      await screenshot(page, "passkey-rejected-intent.png");

      const stored = await adminRecord(server, payload.id);
      assert.equal(stored.state, "rejected");
      assert.deepEqual(
        stored.approval.rejections.map((r: { key: string; kind: string }) => [r.key, r.kind]),
        [[laptop, "Passkey"], [phone, "Passkey"]],
      );
      // Opened again, the link says it plainly.
      assert.equal(await openApproval(page, origin, payload.id), "rejected");
      assert.deepEqual(unexpected(problems), []);
    });
  },
});
