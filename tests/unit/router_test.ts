/**
 * The router (`src/http/router.ts`): path templates to patterns, routes
 * found by method and path, `Allow` in declaration order, and the
 * declarations it refuses.
 */

import assert from "node:assert/strict";
import type { Method, Route } from "../../src/http/route.ts";
import { Router, templatePattern } from "../../src/http/router.ts";

function route(method: Method, path: string, extra: Partial<Route> = {}): Route {
  return {
    method,
    path,
    access: "public",
    handler: () => new Response(path),
    operation: () => ({}),
    ...extra,
  };
}

Deno.test("templatePattern: literal segments match themselves, each {name} one whole segment", () => {
  assert.equal(templatePattern("/openapi.json"), null);
  const pattern = templatePattern("/intents/{id}/approvals")!;
  assert.deepEqual(pattern.exec("/intents/a%2Fb/approvals")?.slice(1), ["a%2Fb"]);
  for (const path of ["/intents/a/b/approvals", "/intents//approvals", "/intents/a/approvals/"]) {
    assert.equal(pattern.exec(path), null, path);
  }
  // A dot is a dot, not any character.
  assert.equal(templatePattern("/v1.0/{id}")?.exec("/v1x0/7"), null);
  assert.deepEqual(templatePattern("/v1.0/{id}")?.exec("/v1.0/7")?.slice(1), ["7"]);
  assert.equal(templatePattern("/static/{name}")?.exec("/static/a.js")?.[1], "a.js");
});

Deno.test("templatePattern refuses what is not a template", () => {
  for (const bad of ["intents", "/a{b}", "/{Id}", "/{}", "/x/{id", "/files/{name}.json"]) {
    assert.throws(() => templatePattern(bad), SyntaxError, bad);
  }
});

Deno.test("Router.find: the route of the method, HEAD as GET, parameters, Allow in declaration order", () => {
  const router = new Router([
    route("POST", "/intents"),
    route("GET", "/intents"),
    route("GET", "/intents/{id}"),
    route("POST", "/intents/{id}/rejections"),
    route("GET", "/"),
  ]);
  const post = router.find("POST", "/intents")!;
  assert.equal(post.route?.method, "POST");
  assert.equal(post.allow, "POST, GET, HEAD");
  assert.equal(router.find("HEAD", "/intents")?.route?.method, "GET");
  assert.deepEqual(router.find("GET", "/intents/order-1")?.params, ["order-1"]);
  const refused = router.find("DELETE", "/intents/order-1")!;
  assert.equal(refused.route, undefined);
  assert.equal(refused.path, "/intents/{id}");
  assert.equal(refused.allow, "GET, HEAD");
  assert.equal(router.find("HEAD", "/intents/x/rejections")?.allow, "POST");
  assert.equal(router.find("HEAD", "/intents/x/rejections")?.route, undefined);
  assert.equal(router.find("GET", "/")?.path, "/");
  for (const path of ["/intents/", "/intents/x/approvals", "/nothing", ""]) {
    assert.equal(router.find("GET", path), null, path);
  }
});

Deno.test("Router refuses a route declared twice, and a route behind a token with an address cost", () => {
  assert.throws(
    () => new Router([route("GET", "/a"), route("GET", "/a")]),
    { name: "RangeError", message: "GET /a is declared twice" },
  );
  assert.throws(
    () => new Router([route("GET", "/a", { access: "admin", cost: "one" })]),
    RangeError,
  );
  new Router([route("GET", "/a", { access: "admin", cost: "none" })]);
});
