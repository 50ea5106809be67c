/**
 * Templates and policies end to end: content addresses, immutability, exact
 * bytes and content type, public reads and admin writes.
 */

import assert from "node:assert/strict";
import { contentAddress, expectError } from "../support/fixtures.ts";
import type { Harness } from "../support/harness.ts";
import { withApp } from "../support/in_process.ts";

const kinds = [
  { kind: "template", path: "/templates" },
  { kind: "policy", path: "/policies" },
] as const;

function post(h: Harness, path: string, body: BodyInit | null, type?: string, auth = true) {
  const headers = new Headers();
  if (type !== undefined) headers.set("content-type", type);
  if (auth) headers.set("authorization", h.auth);
  return h.fetch(path, { method: "POST", headers, body });
}

Deno.test("templates and policies", async (t) => {
  await withApp({}, async (h) => {
    for (const { kind, path } of kinds) {
      await t.step(`${kind}: the id is the base58 SHA-256 of the exact body bytes`, async () => {
        const text = `{"name": "${kind}", "nonce": "${crypto.randomUUID()}"}\n`;
        const res = await post(h, path, text, "application/json");
        assert.equal(res.status, 201);
        assert.equal(res.headers.get("content-type")?.split(";")[0], "application/json");
        assert.deepEqual(await res.json(), { id: await contentAddress(text) });
      });

      await t.step(`${kind}: answers 201 when new, then 200 with the same id`, async () => {
        const bytes = crypto.getRandomValues(new Uint8Array(300));
        const id = await contentAddress(bytes);
        const first = await post(h, path, bytes, "application/octet-stream");
        assert.equal(first.status, 201);
        assert.deepEqual(await first.json(), { id });
        const second = await post(h, path, bytes, "application/octet-stream");
        assert.equal(second.status, 200);
        assert.deepEqual(await second.json(), { id });
        const viaClient = kind === "template"
          ? await h.client.addTemplate(bytes, "application/octet-stream")
          : await h.client.addPolicy(bytes, "application/octet-stream");
        assert.deepEqual(viaClient, { id, created: false });
      });

      await t.step(`${kind}: a body differing by one byte is another document`, async () => {
        const a = `{"v":1,"n":"${crypto.randomUUID()}"}`;
        const b = a + " ";
        const ra = await post(h, path, a, "application/json");
        const rb = await post(h, path, b, "application/json");
        assert.equal(ra.status, 201);
        assert.equal(rb.status, 201);
        assert.notEqual((await ra.json()).id, (await rb.json()).id);
      });

      await t.step(
        `${kind}: GET is public and returns the exact bytes and content type`,
        async () => {
          // Any content type, including a binary body that is not UTF-8.
          const bytes = new Uint8Array([
            0xff,
            0x00,
            0xfe,
            0x0d,
            0x0a,
            ...crypto.getRandomValues(new Uint8Array(64)),
          ]);
          const type = "application/vnd.example.rules+cbor; version=2";
          const created = await post(h, path, bytes, type);
          assert.equal(created.status, 201);
          const { id } = await created.json();
          const got = await h.fetch(`${path}/${id}`);
          assert.equal(got.status, 200);
          assert.equal(got.headers.get("content-type"), type);
          assert.deepEqual(new Uint8Array(await got.arrayBuffer()), bytes);

          const text = `# plain text ${kind}\r\nwith ünïcødé\u0000 and trailing space  `;
          const made = await post(h, path, text, "text/plain; charset=utf-8");
          const textId = (await made.json()).id;
          const back = await h.fetch(`${path}/${textId}`);
          assert.equal(back.headers.get("content-type"), "text/plain; charset=utf-8");
          assert.deepEqual(
            new Uint8Array(await back.arrayBuffer()),
            new TextEncoder().encode(text),
          );
        },
      );

      await t.step(`${kind}: the first content type stays with the bytes`, async () => {
        const text = `{"n":"${crypto.randomUUID()}"}`;
        const first = await post(h, path, text, "application/json");
        const { id } = await first.json();
        const again = await post(h, path, text, "text/plain");
        assert.equal(again.status, 200);
        await again.body?.cancel();
        const got = await h.fetch(`${path}/${id}`);
        assert.equal(got.headers.get("content-type"), "application/json");
        await got.body?.cancel();
      });

      await t.step(`${kind}: an empty body is 400`, async () => {
        await expectError(await post(h, path, "", "application/json"), 400, "invalid_body");
        await expectError(await post(h, path, null, "application/json"), 400, "invalid_body");
      });

      await t.step(`${kind}: POST needs the admin token`, async () => {
        const res = await post(h, path, "{}", "application/json", false);
        assert.equal(res.headers.get("www-authenticate"), "Bearer");
        await expectError(res, 401, "unauthorized");
      });

      await t.step(
        `${kind}: a body over MAX_BODY_BYTES is 413, one at the limit is fine`,
        async () => {
          const limit = 32768;
          const at = new Uint8Array(limit).fill(0x61);
          at.set(new TextEncoder().encode(crypto.randomUUID()));
          const ok = await post(h, path, at, "text/plain");
          assert.equal(ok.status, 201);
          assert.deepEqual(await ok.json(), { id: await contentAddress(at) });
          const over = new Uint8Array(limit + 1).fill(0x62);
          await expectError(await post(h, path, over, "text/plain"), 413, "payload_too_large");
        },
      );

      await t.step(`${kind}: an unknown id is 404`, async () => {
        const unknown = await contentAddress(crypto.randomUUID());
        await expectError(await h.fetch(`${path}/${unknown}`), 404, "not_found");
        await expectError(await h.fetch(`${path}/not-base58-0OIl`), 404, "not_found");
      });

      await t.step(`${kind}: there is no update or delete`, async () => {
        const text = `{"n":"${crypto.randomUUID()}"}`;
        const { id } = await (await post(h, path, text, "application/json")).json();
        for (const method of ["PUT", "DELETE", "PATCH"]) {
          const res = await h.fetch(`${path}/${id}`, {
            method,
            headers: { authorization: h.auth, "content-type": "application/json" },
            body: method === "DELETE" ? undefined : "{}",
          });
          await expectError(res, 405, "method_not_allowed");
        }
        const got = await h.fetch(`${path}/${id}`);
        assert.equal(await got.text(), text);
      });
    }

    await t.step("templates and policies are separate collections", async () => {
      const text = `{"shared":"${crypto.randomUUID()}"}`;
      const asTemplate = await post(h, "/templates", text, "application/json");
      assert.equal(asTemplate.status, 201);
      const { id } = await asTemplate.json();
      await expectError(await h.fetch(`/policies/${id}`), 404, "not_found");
      const asPolicy = await post(h, "/policies", text, "application/json");
      assert.equal(asPolicy.status, 201);
      assert.deepEqual(await asPolicy.json(), { id });
    });
  });
});
