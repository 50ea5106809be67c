/**
 * `GET /` and `GET /static/{name}`: only allow-listed files, each with the
 * strict Content-Security-Policy, revalidated by ETag.
 */

import assert from "node:assert/strict";
import { PAGE_CSP, STATIC_FILES } from "../../src/http/routes/static.ts";
import * as inProcess from "../support/in_process.ts";

function withApp(
  run: (fetch: (path: string, init?: RequestInit) => Promise<Response>) => Promise<void>,
): Promise<void> {
  return inProcess.withApp({
    env: { ADMIN_TOKEN: "static-route-test-token-0123456789" },
    origin: "http://localhost:8000",
  }, (h) => run(h.fetch));
}

Deno.test("GET / serves the page as HTML with the strict CSP", async () => {
  await withApp(async (get) => {
    const response = await get("/");
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(response.headers.get("content-security-policy"), PAGE_CSP);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    const html = await response.text();
    assert.match(html, /<script type="module" src="\/static\/app\.js"><\/script>/);
    // Nothing inline that the policy would have to allow.
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
    assert.doesNotMatch(html, /\sstyle=|\son[a-z]+=/i);
  });
});

Deno.test("the CSP allows this origin only and forbids inline code, framing and form posts", () => {
  const directives = new Map(
    PAGE_CSP.split(/;\s*/).map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]),
  );
  assert.equal(directives.get("default-src"), "'none'");
  for (const name of ["script-src", "style-src", "connect-src", "img-src"]) {
    assert.equal(directives.get(name), "'self'", name);
  }
  assert.equal(directives.get("base-uri"), "'none'");
  assert.equal(directives.get("form-action"), "'none'");
  assert.equal(directives.get("frame-ancestors"), "'none'");
  assert.doesNotMatch(PAGE_CSP, /unsafe|\*|data:|blob:|http/);
});

Deno.test("every allow-listed file is served with its media type and the CSP", async () => {
  await withApp(async (get) => {
    for (const [name, type] of Object.entries(STATIC_FILES)) {
      const response = await get(`/static/${name}`);
      assert.equal(response.status, 200, name);
      assert.equal(response.headers.get("content-type"), type, name);
      assert.equal(response.headers.get("content-security-policy"), PAGE_CSP, name);
      assert.ok((await response.arrayBuffer()).byteLength > 0, name);
    }
  });
});

Deno.test("every module the page imports is on the allow-list", async () => {
  const dir = new URL("../../static/", import.meta.url);
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".js")) continue;
    const code = await Deno.readTextFile(new URL(entry.name, dir));
    // Static imports of sibling modules: `from "./name.js"`.
    for (const [, name] of code.matchAll(/\bfrom\s+"\.\/([^"]+)"/g)) {
      assert.ok(Object.hasOwn(STATIC_FILES, name), `${entry.name} imports ${name}`);
    }
    assert.ok(Object.hasOwn(STATIC_FILES, entry.name), `${entry.name} is served`);
  }
});

Deno.test("a name outside the allow-list is a 404, whatever path it tries to reach", async () => {
  await withApp(async (get) => {
    for (
      const path of [
        "/static/",
        "/static/nope.js",
        "/static/..%2Fdeno.json",
        "/static/%2e%2e%2fmain.ts",
        "/static/../main.ts",
        "/static/app.js%00",
        "/static/constructor",
        "/static/__proto__",
        "/static/hasOwnProperty",
        "/static/sub/app.js",
        "/index.html",
      ]
    ) {
      const response = await get(path);
      assert.equal(response.status, 404, path);
      assert.deepEqual(Object.keys(await response.json()).sort(), ["code", "message"], path);
    }
  });
});

Deno.test("a matching If-None-Match gets a 304 without a body; a stale one gets the file", async () => {
  await withApp(async (get) => {
    const first = await get("/static/app.js");
    await first.body?.cancel();
    const etag = first.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{32}"$/);
    const again = await get("/static/app.js", { headers: { "if-none-match": etag! } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    assert.equal(again.headers.get("content-security-policy"), PAGE_CSP);
    const stale = await get("/static/app.js", { headers: { "if-none-match": '"0"' } });
    assert.equal(stale.status, 200);
    assert.ok((await stale.text()).length > 0);
  });
});

Deno.test("only GET and HEAD are allowed on the page", async () => {
  await withApp(async (get) => {
    const head = await get("/", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    const post = await get("/", { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal((await post.json()).code, "method_not_allowed");
  });
});
