/**
 * The passkey page, end to end in headless Chromium: the browser's own WebAuthn
 * stack (with a CDP virtual authenticator) registers a passkey and makes the
 * assertion, the real server verifies it, and the page shows what the server
 * answered.
 *
 * Set `UPDATE_SCREENSHOTS=1` to write docs/screenshots/passkey-*.png.
 * Without Chromium the tests are ignored, unless `CI` is set (then they fail).
 */

import assert from "node:assert/strict";
import { base58 } from "@scure/base";
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
import type { Page } from "../support/chromium.ts";
import { sleep } from "../support/time.ts";

const TEMPLATE = '{"name": "transfer", "fields": ["amount", "to"]}';

/** Adds the template through the page's admin form; returns its id. */
async function addTemplateViaPage(page: Page, token: string): Promise<string> {
  await page.evaluate("document.getElementById('add-template').open = true");
  await fill(page, "admin-token", token);
  await fill(page, "template-doc", TEMPLATE);
  await click(page, "add-template-button");
  await page.waitUntil(
    "/^(Added|Already stored|\\d{3} )/.test(document.getElementById('template-status').textContent)",
    10_000,
    "template added",
  );
  const status = await text(page, "template-status");
  assert.match(status, /^(Added|Already stored): /, status);
  return await page.evaluate<string>("document.getElementById('template-id').value");
}

async function sha256Base58(text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  return base58.encode(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

Deno.test({
  name: "the page registers a passkey, signs an intent with it and shows the stored record",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPage(async ({ server, page, authenticatorId, origin, problems }) => {
      await registerPasskey(page, "Laptop");
      const { credentials } = await page.send("WebAuthn.getCredentials", { authenticatorId });
      assert.equal((credentials as unknown[]).length, 1, "the virtual authenticator holds the key");
      const listedKey = await page.evaluate<string>(
        "document.querySelector('#passkeys .key').textContent",
      );

      const templateId = await addTemplateViaPage(page, server.adminToken);
      assert.equal(templateId, await sha256Base58(TEMPLATE));

      // The page proposes a UUIDv7 (ids that grow with time are cheaper to store), a new one on demand.
      const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
      const proposed = await page.evaluate<string>("document.getElementById('intent-id').value");
      assert.match(proposed, UUID_V7);
      await click(page, "new-id");
      const next = await page.evaluate<string>("document.getElementById('intent-id').value");
      assert.match(next, UUID_V7);
      assert.notEqual(next, proposed);
      // The first 48 bits are the time it was made: a later id does not sort before.
      assert.ok(next.slice(0, 13) >= proposed.slice(0, 13), `${proposed} then ${next}`);
      await fill(page, "intent-id", "order-42");
      await fill(page, "fields", '{"amount": "10.00", "to": "alice"}');
      const outcome = await submit(page);
      assert.equal(outcome.state, "accepted", explain(outcome, server));
      assert.match(outcome.summary, /^201 Created/);

      const shown = JSON.parse(outcome.body);
      assert.equal(shown.id, "order-42");
      assert.equal(shown.variant, "A");
      assert.equal(shown.template_id, templateId);
      assert.deepEqual(shown.attrs, { fields: { amount: "10.00", to: "alice" } });
      assert.equal(shown.authorship.kind, "Passkey");
      assert.deepEqual(shown.authorship.signers, [listedKey]);
      const clientData = JSON.parse(shown.request.signature.Passkey.client_data);
      assert.equal(clientData.type, "webauthn.get");
      assert.equal(clientData.origin, origin);
      // The page's challenge is the one the server recomputed from the payload.
      assert.equal(clientData.challenge, await text(page, "challenge"));

      // The browser's authenticator signed (its counter moved), and the server stored that record.
      const after = await page.send("WebAuthn.getCredentials", { authenticatorId });
      assert.ok((after.credentials as { signCount: number }[])[0].signCount >= 1);
      const stored = await fetch(`${server.url}/intents/order-42`, {
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
      assert.equal(stored.status, 200);
      assert.deepEqual(await stored.json(), shown);

      // The page finds the intent in the log: its proof, checked against the served key.
      const logState = await page.waitUntil<string>(
        `(() => { const s = document.getElementById('log-proof').dataset.state;
          return ['verified', 'bad', 'failed'].includes(s) ? s : ''; })()`,
        20_000,
        "the log's proof",
      );
      assert.equal(logState, "verified", await text(page, "log-summary"));
      assert.match(await text(page, "log-summary"), /inclusion proof verifies.*entry \d+/);
      const checked = JSON.parse(await text(page, "log-body"));
      assert.equal(checked.log_key, await (await fetch(`${server.url}/log/key`)).text());
      assert.deepEqual([checked.witnesses, checked.quorum], [[], 0]);

      // Until the checkpoint covers the entry, /log/proof answers 404: the browser logs each.
      const polled = /status of 404 .*\/log\/proof\?leaf=/;
      assert.deepEqual(problems.filter((p) => !polled.test(p)), []);
      await screenshot(page, "passkey-accepted.png");
    });
  },
});

Deno.test({
  name: "the page shows the server's error for an unknown template and for a reused intent id",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPage(async ({ server, page }) => {
      await registerPasskey(page, "Phone");

      // A well-formed id of a template that was never stored.
      await fill(page, "template-id", await sha256Base58("no such template"));
      await fill(page, "intent-id", "order-7");
      const missing = await submit(page);
      assert.equal(missing.state, "rejected", missing.summary);
      const missingBody = JSON.parse(missing.body);
      assert.deepEqual(Object.keys(missingBody).sort(), ["code", "message"]);
      assert.equal(missingBody.code, "template_not_found");
      assert.match(missing.summary, /^400 template_not_found/);

      const added = await fetch(`${server.url}/templates`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.adminToken}`,
          "content-type": "application/json",
        },
        body: TEMPLATE,
      });
      const { id: templateId } = await added.json();
      await fill(page, "template-id", templateId);
      const first = await submit(page);
      assert.equal(first.state, "accepted", explain(first, server));
      const again = await submit(page);
      assert.equal(again.state, "rejected", again.summary);
      const againBody = JSON.parse(again.body);
      assert.deepEqual(Object.keys(againBody).sort(), ["code", "message"]);
      assert.equal(againBody.code, "intent_exists");
      assert.match(again.summary, /^409 intent_exists/);
      await screenshot(page, "passkey-rejected.png");
    });
  },
});

Deno.test({
  name: "the page assembles a multisig from two passkeys that the server accepts at threshold 2",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPage(async ({ server, page }) => {
      await registerPasskey(page, "Laptop");
      await registerPasskey(page, "Phone");
      const keys = await page.evaluate<string[]>(
        "[...document.querySelectorAll('#passkeys .key')].map((e) => e.textContent)",
      );
      assert.equal(new Set(keys).size, 2);
      await addTemplateViaPage(page, server.adminToken);
      await page.evaluate("document.getElementById('mode-multisig').checked = true");

      // Threshold 3 with two signers of weight 1: the service refuses it.
      await fill(page, "threshold", "3");
      await fill(page, "intent-id", "multi-1");
      const short = await submit(page);
      assert.equal(short.state, "rejected", short.summary);
      assert.equal(JSON.parse(short.body).code, "invalid_signature");

      await fill(page, "threshold", "2");
      const outcome = await submit(page);
      assert.equal(outcome.state, "accepted", explain(outcome, server));
      const record = JSON.parse(outcome.body);
      assert.equal(record.authorship.kind, "Multisig");
      assert.deepEqual([...record.authorship.signers].sort(), [...keys].sort());
    });
  },
});

Deno.test({
  name: "GET / carries the strict CSP and the page loads without a CSP violation",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await withPage(async ({ server, page, problems }) => {
      const response = await fetch(`${server.url}/`);
      await response.body?.cancel();
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
      const csp = response.headers.get("content-security-policy") ?? "";
      for (
        const directive of [
          "default-src 'none'",
          "script-src 'self'",
          "style-src 'self'",
          "connect-src 'self'",
          "base-uri 'none'",
          "form-action 'none'",
          "frame-ancestors 'none'",
        ]
      ) {
        assert.ok(csp.split(/;\s*/).includes(directive), `CSP lacks ${directive}: ${csp}`);
      }
      // The stylesheet applied and the module ran (the passkey list was rendered).
      const styled = await page.evaluate<string>(
        "getComputedStyle(document.querySelector('section')).borderTopStyle",
      );
      assert.equal(styled, "solid");
      assert.deepEqual(problems, [], "the page logged problems on load");

      // The listener does hear a violation: an inline style is refused by this policy.
      await page.evaluate(`(() => {
        const s = document.createElement("style");
        s.textContent = "body { color: red }";
        document.head.append(s);
      })()`);
      const deadline = Date.now() + 5_000;
      while (!problems.some((p) => /Content Security Policy/i.test(p)) && Date.now() < deadline) {
        await sleep(50);
      }
      assert.ok(
        problems.some((p) => /Content Security Policy/i.test(p)),
        `no CSP report heard: ${problems.join("\n")}`,
      );
    });
  },
});
