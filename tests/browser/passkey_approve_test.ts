/**
 * The passkey page approves (docs/interface.md §10), end to end in headless Chromium:
 * `/?approve=<id>` shows what a pending intent's signers approve, passkeys
 * registered through the page approve it one after another with the browser's
 * own WebAuthn stack, and the real server counts them until the intent is
 * accepted.
 *
 * Set `UPDATE_SCREENSHOTS=1` to write docs/screenshots/passkey-approve*.png.
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
import {
  generateEd25519Key,
  passkeyChallenge,
  type Payload,
  signVariantA,
} from "../../client/mod.ts";
import {
  adminRecord,
  approveWith,
  governedTemplate,
  listedKeys,
  openApproval,
  post,
  quorum,
  signCounts,
  tamperApprovals,
  tick,
  unexpected,
} from "../support/approval_page.ts";
import {
  click,
  explain,
  fill,
  ignore,
  registerPasskey,
  screenshot,
  submit,
  text,
  withPage,
} from "../support/passkey_page.ts";
import { sleep } from "../support/time.ts";

const options = { ignore, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...options,
  name:
    "two passkeys approve an Ed25519 submission through the page until the threshold is reached",
  async fn() {
    await withPage(async ({ server, page, authenticatorId, origin, problems }) => {
      await registerPasskey(page, "Laptop");
      await registerPasskey(page, "Phone");
      await registerPasskey(page, "Tablet");
      const [laptop, phone, tablet] = await listedKeys(page);
      const ed = generateEd25519Key();
      const edKey = base58.encode(ed.publicKey);
      // Weight 1 each, threshold 3: the submission gives 1, Laptop 2, Phone 3. Tablet is no signer.
      // Under rules: the first, true, keeps the threshold; the second is false.
      const rules = [
        { when: "double(intent.attrs.fields.amount) > 100.0", threshold: 3 },
        { when: "intent.attrs.fields.to == 'mallory'", deny: "this account is blocked" },
      ];
      const templateId = await governedTemplate(server, {
        signers: { [edKey]: 1, [laptop]: 1, [phone]: 1 },
        threshold: 3,
        rules,
      });
      const payload: Payload = {
        id: "order-approve-1",
        template_id: templateId,
        attrs: { fields: { amount: "250.00", to: "bob", tags: ["rent", "may"] } },
      };
      const submitted = await post(server, signVariantA(payload, ed));
      assert.equal(submitted.status, 202);
      const record = await submitted.json();

      assert.equal(await openApproval(page, origin, payload.id), "pending");
      assert.equal(await text(page, "approve-id"), payload.id);
      assert.equal(await text(page, "approve-variant"), "A");
      assert.equal(await text(page, "approve-ref-label"), "template_id");
      assert.equal(await text(page, "approve-ref"), templateId);
      assert.equal(
        await page.evaluate("document.querySelector('#approve-expires time').dateTime"),
        record.approval.expires_at,
      );
      // The signed object member by member, labelled, values as JSON literals.
      const members = await page.evaluate<[string, string][]>(`[...document.querySelectorAll(
        "#approve-signed dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])`);
      const shown = new Map(members);
      assert.equal(shown.get("id"), '"order-approve-1"');
      assert.equal(shown.get("template_id"), JSON.stringify(templateId));
      assert.equal(shown.get("amount"), '"250.00"');
      assert.equal(shown.get("to"), '"bob"');
      assert.deepEqual(
        await page.evaluate(
          "[...document.querySelectorAll('#approve-signed ol li')]" +
            ".map((li) => li.textContent)",
        ),
        ['"rent"', '"may"'],
      );
      assert.equal(await text(page, "approve-challenge"), await passkeyChallenge(payload));
      assert.equal(await text(page, "approve-weight"), "Weight 1 of 3 reached.");
      // The true rule and the effective quorum, the rule as the document writes it.
      assert.equal(
        await text(page, "approve-rules-line"),
        "Under the document's rules: rules true: 0; effective quorum: threshold 3, 3 counting " +
          "signers (below), kinds that count: Ed25519, Passkey.",
      );
      assert.equal(
        await page.waitUntil<string>(
          "document.querySelector('#approve-rules-list li')?.textContent ?? ''",
          10_000,
          "the rules read",
        ),
        `rules[0] when ${rules[0].when}: threshold 3`,
      );

      const rows = await quorum(page);
      assert.deepEqual(rows.map((r) => r.key), [edKey, laptop, phone]);
      assert.ok(!rows.some((r) => r.key === tablet));
      for (const row of rows) {
        assert.equal(row.title, row.key, "the full key on hover");
        assert.ok(row.shown.length < row.key.length, "the key shortened for display");
        assert.equal(row.weight, "1");
      }
      assert.deepEqual(rows.map((r) => r.kind), ["Ed25519", "Passkey", "Passkey"]);
      assert.deepEqual(rows.map((r) => r.mine), ["", "Laptop", "Phone"]);
      assert.equal(rows[0].at, record.approval.approvals[0].at);
      assert.deepEqual(rows.slice(1).map((r) => r.approved), ["not yet", "not yet"]);

      const registered = await signCounts(page, authenticatorId);
      const first = await approveWith(page, "Laptop");
      assert.equal(first.state, "pending", explain(first, server));
      assert.match(first.summary, /^Approved by “Laptop”: still pending, weight 2 of 3\.$/);
      assert.equal(await text(page, "approve-weight"), "Weight 2 of 3 reached.");
      const afterFirst = await quorum(page);
      assert.match(afterFirst[1].approved, /^✓ #2 \(Passkey\)/);
      assert.ok(afterFirst[1].at);
      await screenshot(page, "passkey-approve.png");

      const again = await approveWith(page, "Laptop");
      assert.equal(again.state, "rejected", again.summary);
      assert.match(again.summary, /^409 already_approved: /);
      assert.deepEqual(Object.keys(JSON.parse(again.body)).sort(), ["code", "message"]);
      const stranger = await approveWith(page, "Tablet");
      assert.equal(stranger.state, "rejected", stranger.summary);
      assert.match(stranger.summary, /^403 signer_not_authorized: /);
      assert.equal(await text(page, "approve-weight"), "Weight 2 of 3 reached.");

      const last = await approveWith(page, "Phone");
      assert.equal(last.state, "accepted", explain(last, server));
      assert.equal(last.summary, "Approved by “Phone”: the intent is accepted.");
      assert.deepEqual(JSON.parse(last.body), { id: payload.id, state: "accepted" });
      assert.equal(
        await page.evaluate("document.getElementById('approve-section').dataset.state"),
        "accepted",
      );
      assert.ok(await page.evaluate("document.getElementById('approve-actions').hidden"));
      await screenshot(page, "passkey-approved.png");

      const stored = await adminRecord(server, payload.id);
      assert.equal(stored.state, "accepted");
      assert.equal(stored.approval.weight, 3);
      assert.deepEqual(
        stored.approval.approvals.map((a: { key: string; kind: string }) => [a.key, a.kind]),
        [[edKey, "Ed25519"], [laptop, "Passkey"], [phone, "Passkey"]],
      );
      // Every click made an assertion: Laptop twice, Tablet and Phone once each.
      const counts = await signCounts(page, authenticatorId);
      const made = [...counts].map(([id, n]) => n - registered.get(id)!);
      assert.deepEqual(made.sort(), [1, 1, 2]);

      // Opened again, the link says plainly that nothing is left to approve.
      assert.equal(await openApproval(page, origin, payload.id), "accepted");
      assert.match(await text(page, "approve-status"), /accepted/);
      assert.ok(await page.evaluate("document.getElementById('approve-actions').hidden"));
      assert.deepEqual(unexpected(problems), []);
    });
  },
});

Deno.test({
  ...options,
  name: "a submission left pending shows a share link whose view the second passkey approves",
  async fn() {
    await withPage(async ({ server, browser, page, origin, problems }) => {
      await registerPasskey(page, "Laptop");
      await registerPasskey(page, "Phone");
      const [laptop, phone] = await listedKeys(page);
      const templateId = await governedTemplate(server, {
        signers: { [laptop]: 1, [phone]: 1 },
        threshold: 2,
      });
      await fill(page, "template-id", templateId);
      await fill(page, "intent-id", "share-1");
      // The note hides a right-to-left override: the view writes it as an escape.
      await fill(page, "fields", '{"amount": "5.00", "to": "carol", "note": "a\\u202eb"}');
      await tick(page, "Laptop");
      const outcome = await submit(page);
      assert.equal(outcome.state, "pending", explain(outcome, server));
      assert.match(outcome.summary, /^202 Accepted: the intent is stored pending, weight 1 of 2;/);
      assert.equal(JSON.parse(outcome.body).state, "pending");
      assert.equal(await page.evaluate("document.getElementById('share').hidden"), false);
      const link = await page.evaluate<string>("document.getElementById('share-link').href");
      assert.equal(link, `${origin}/?approve=share-1`);
      assert.equal(await text(page, "share-link"), link);

      await browser.cdp.send("Browser.grantPermissions", {
        origin,
        permissions: ["clipboardReadWrite", "clipboardSanitizedWrite"],
      });
      await click(page, "share-copy");
      await page.waitUntil("document.getElementById('share-status').textContent", 5_000, "copy");
      assert.equal(await text(page, "share-status"), "Copied.");
      assert.equal(await page.evaluate("navigator.clipboard.readText()"), link);

      await page.goto(link);
      await page.waitUntil("document.documentElement.dataset.ready === 'true'", 10_000, "ready");
      assert.equal(
        await page.evaluate("document.getElementById('approve-section').dataset.state"),
        "pending",
      );
      // The submit form is out of the way; the passkeys stay, to approve with.
      assert.ok(await page.evaluate("document.getElementById('sign-section').hidden"));
      assert.equal(
        await page.evaluate("document.getElementById('passkeys-section').hidden"),
        false,
      );
      const note = await page.evaluate<string>(`[...document.querySelectorAll("#approve-signed dt")]
        .find((dt) => dt.textContent === "note").nextElementSibling.textContent`);
      assert.equal(note, '"a\\u202eb"');
      const rows = await quorum(page);
      assert.deepEqual(rows.map((r) => [r.key, r.mine]), [[laptop, "Laptop"], [phone, "Phone"]]);
      assert.match(rows[0].approved, /^✓ #1 \(Passkey\)/);
      assert.equal(rows[1].approved, "not yet");

      // The submitter's passkey alone is refused; with both ticked the page asks the one that
      // has not approved yet.
      const again = await approveWith(page, "Laptop");
      assert.match(again.summary, /^409 already_approved: /);
      const done = await approveWith(page, "Laptop", "Phone");
      assert.equal(done.state, "accepted", explain(done, server));
      assert.equal(done.summary, "Approved by “Phone”: the intent is accepted.");
      const accepted = await quorum(page);
      assert.equal(accepted[1].approved, "✓ just now, from this page");

      const stored = await adminRecord(server, "share-1");
      assert.equal(stored.state, "accepted");
      assert.deepEqual(stored.approval.approvals.map((a: { key: string }) => a.key), [
        laptop,
        phone,
      ]);
      assert.deepEqual(unexpected(problems), []);
    });
  },
});
Deno.test({
  ...options,
  name: "the view says plainly when an intent expired or is unknown, and refuses a forged view",
  async fn() {
    await withPage(async ({ server, page, authenticatorId, origin }) => {
      await registerPasskey(page, "Laptop");
      const [laptop] = await listedKeys(page);
      const ed = generateEd25519Key();
      const signers = { [base58.encode(ed.publicKey)]: 1, [laptop]: 1 };

      const brief = await governedTemplate(server, { signers, threshold: 2, approval_window_s: 1 });
      const gone = await post(server, signVariantA({ id: "gone-1", template_id: brief }, ed));
      assert.equal(gone.status, 202);
      await gone.body?.cancel();
      // Wait (bounded) until the service reads it as expired, then open its link.
      const deadline = Date.now() + 10_000;
      while (
        (await (await fetch(`${server.url}/intents/gone-1/approvals`)).json()).state !== "expired"
      ) {
        assert.ok(Date.now() < deadline, "the intent did not expire");
        await sleep(200);
      }
      assert.equal(await openApproval(page, origin, "gone-1"), "expired");
      assert.match(await text(page, "approve-status"), /expired/);
      assert.ok(await page.evaluate("document.getElementById('approve-actions').hidden"));

      assert.equal(await openApproval(page, origin, "no-such-intent"), "missing");
      assert.match(await text(page, "approve-status"), /^404 not_found: /);

      // A view whose signed object was changed on the way: its challenge no longer matches.
      const templateId = await governedTemplate(server, { signers, threshold: 2 });
      const payload = {
        id: "forged-1",
        template_id: templateId,
        attrs: { fields: { amount: "10.00", to: "bob" } },
      };
      const pending = await post(server, signVariantA(payload, ed));
      assert.equal(pending.status, 202);
      await pending.body?.cancel();
      const before = await signCounts(page, authenticatorId);
      await tamperApprovals(page, (view) => {
        (view.signed as typeof payload).attrs.fields.amount = "10000.00";
      });
      assert.equal(await openApproval(page, origin, "forged-1"), "refused");
      assert.match(await text(page, "approve-status"), /^Not signing this: its challenge is not/);
      assert.ok(await page.evaluate("document.getElementById('approve-actions').hidden"));
      assert.ok(await page.evaluate("document.getElementById('approve-view').hidden"));
      await page.send("Fetch.disable");
      // The authenticator was never asked, and the service holds the submission's approval only.
      assert.deepEqual(await signCounts(page, authenticatorId), before);
      const stored = await adminRecord(server, "forged-1");
      assert.equal(stored.approval.approvals.length, 1);
      assert.equal(stored.state, "pending");
    });
  },
});
