/**
 * The webhook admin API of docs/interface.md §11 in process: every operation's answer
 * and refusals (401, 404 with and without a read, 400 `invalid_body`,
 * `invalid_webhook_url`, `too_many_webhooks`), the secret shown at creation
 * and rotation only, `after`, `next_event` and `lag` as the feed grows, and
 * replays. No deliverer runs here: what is stored is what the API says.
 */

import assert from "node:assert/strict";
import { generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { base64 } from "@scure/base";
import type { AppHarness } from "../support/in_process.ts";
import { withApp } from "../support/in_process.ts";
import { expectError, newPayload } from "../support/fixtures.ts";
import type { NewWebhookEndpoint } from "../../client/mod.ts";

/** A request body or an answer, as sent or read. */
type Json = Record<string, unknown>;

const HTTP_PRIVATE = { WEBHOOKS_ALLOW_HTTP: "true", WEBHOOKS_ALLOW_PRIVATE: "true" };

function call(h: AppHarness, method: string, path: string, body?: unknown, token = h.auth) {
  const headers: Record<string, string> = { authorization: token };
  if (body !== undefined) headers["content-type"] = "application/json";
  return h.fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function add(h: AppHarness, body: Json): Promise<NewWebhookEndpoint> {
  const response = await call(h, "POST", "/webhooks", body);
  const created = await response.json();
  assert.equal(response.status, 201, JSON.stringify(created));
  return created;
}

async function submitN(h: AppHarness, n: number): Promise<void> {
  const template = await h.newTemplate();
  const key = generateEd25519Key();
  for (let i = 0; i < n; i++) {
    const response = await h.submit(signVariantA(newPayload(template), key));
    assert.equal(response.status, 201);
    await response.body?.cancel();
  }
}

Deno.test("POST /webhooks: 201 with the endpoint after the feed's head and its secret", async () => {
  await withApp({}, async (h) => {
    const empty = await add(h, { url: "https://hooks.example/in" });
    assert.equal(empty.after, null, "an empty feed: from its beginning");
    await submitN(h, 3);
    const response = await call(h, "POST", "/webhooks", {
      url: "https://hooks.example/in?team=7",
      events: ["intent.accepted", "intent.expired"],
      description: "orchestrator 🚀",
    });
    const created = await response.json();
    assert.equal(response.status, 201);
    assert.equal(response.headers.get("location"), `/webhooks/${created.id}`);
    const { id, secret, created_at, ...rest } = created;
    assert.match(id, /^wh_[0-9a-f]{32}$/);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(base64.decode(secret.slice(6)).length, 32);
    assert.ok(!Number.isNaN(Date.parse(created_at)));
    assert.deepEqual(rest, {
      url: "https://hooks.example/in?team=7",
      events: ["intent.accepted", "intent.expired"],
      description: "orchestrator 🚀",
      status: "active",
      after: "3",
      next_event: null,
      lag: 0,
      last_attempt: null,
    });
    // The secret is shown at creation only: never by GET or the listing.
    const got = await (await call(h, "GET", `/webhooks/${id}`)).json();
    assert.deepEqual(got, { id, created_at, ...rest });
    const list = await (await call(h, "GET", "/webhooks")).json();
    assert.deepEqual(list.items.map((e: { id: string }) => e.id), [empty.id, id]);
    assert.ok(list.items.every((e: Json) => !("secret" in e)));
    assert.equal(list.items[0].lag, 3);
    assert.equal(list.items[0].next_event, "1");
  });
});

Deno.test("every webhook operation takes the admin token only", async () => {
  await withApp({ env: { EVENTS_TOKEN: "an-events-token-0123" } }, async (h) => {
    const { id } = await add(h, { url: "https://hooks.example/in" });
    const operations: [string, string, unknown?][] = [
      ["POST", "/webhooks", { url: "https://hooks.example/in" }],
      ["GET", "/webhooks"],
      ["GET", `/webhooks/${id}`],
      ["PATCH", `/webhooks/${id}`, { status: "paused" }],
      ["DELETE", `/webhooks/${id}`],
      ["POST", `/webhooks/${id}/secret`],
      ["POST", `/webhooks/${id}/replay`, { after: null }],
      ["GET", `/webhooks/${id}/attempts`],
    ];
    for (const [method, path, body] of operations) {
      for (const token of ["", "Bearer an-events-token-0123", "Bearer wrong-token-0123456789"]) {
        const response = await call(h, method, path, body, token);
        assert.equal(response.headers.get("www-authenticate"), "Bearer", `${method} ${path}`);
        await expectError(response, 401, "unauthorized");
      }
    }
    assert.equal((await call(h, "GET", `/webhooks/${id}`)).status, 200, "nothing was changed");
  });
});

Deno.test("unknown endpoints are 404 on every operation, impossible ids without a read", async () => {
  await withApp({}, async (h) => {
    for (const id of ["wh_00000000000000000000000000000000", "nope", "wh_" + "a".repeat(200)]) {
      for (
        const [method, path, body] of [
          ["GET", `/webhooks/${id}`],
          ["PATCH", `/webhooks/${id}`, { status: "paused" }],
          ["DELETE", `/webhooks/${id}`],
          ["POST", `/webhooks/${id}/secret`],
          ["POST", `/webhooks/${id}/replay`, { after: null }],
          ["GET", `/webhooks/${id}/attempts`],
        ] as [string, string, unknown?][]
      ) {
        await expectError(await call(h, method, path, body), 404, "not_found");
      }
    }
  });
});

Deno.test("the body of POST and PATCH: strict shape, known event types, 200 characters", async () => {
  await withApp({}, async (h) => {
    const { id } = await add(h, { url: "https://hooks.example/in" });
    const refused: [Json, string][] = [
      [{}, "url"],
      [{ url: 7 }, "url"],
      [{ url: "https://hooks.example/in", extra: 1 }, "extra"],
      [{ url: "https://hooks.example/in", events: ["intent.created"] }, "events[0]"],
      [{ url: "https://hooks.example/in", events: [] }, "events"],
      [
        { url: "https://hooks.example/in", events: ["intent.accepted", "intent.accepted"] },
        "events",
      ],
      [{ url: "https://hooks.example/in", events: "intent.accepted" }, "events"],
      [{ url: "https://hooks.example/in", description: "x".repeat(201) }, "description"],
      [{ url: "https://hooks.example/in", description: null }, "description"],
    ];
    for (const [body, path] of refused) {
      await expectError(await call(h, "POST", "/webhooks", body), 400, "invalid_body", {
        mentions: path,
      });
      if (typeof body.url !== "string") continue;
      const { url: _, ...patch } = body;
      if (Object.keys(patch).length === 0) continue;
      await expectError(await call(h, "PATCH", `/webhooks/${id}`, patch), 400, "invalid_body", {
        mentions: path,
      });
    }
    await expectError(
      await call(h, "PATCH", `/webhooks/${id}`, { status: "disabled" }),
      400,
      "invalid_body",
      { mentions: "status" },
    );
    await expectError(
      await call(h, "POST", "/webhooks", '{"url":"https://a.example/","url":"https://b.example/"}'),
      400,
      "invalid_json",
    );
    const text = await call(h, "POST", "/webhooks", "url=x", h.auth);
    assert.equal(text.status, 400);
    await text.body?.cancel();
    // 200 characters counted as code points: an astral character counts once.
    const astral = await add(h, { url: "https://hooks.example/in", description: "😀".repeat(200) });
    assert.equal(astral.description, "😀".repeat(200));
    // null events: every type.
    assert.equal((await add(h, { url: "https://hooks.example/in", events: null })).events, null);
  });
});

Deno.test("webhook URLs follow §11: https, normal form, no private address literal", async () => {
  await withApp({}, async (h) => {
    const { id } = await add(h, { url: "https://hooks.example/in" });
    const refused = [
      "http://hooks.example/in",
      "ftp://hooks.example/in",
      "https://user:pw@hooks.example/in",
      "https://hooks.example/in#frag",
      "https://HOOKS.example/in",
      "https://hooks.example/" + "a".repeat(2048),
      "https://127.0.0.1/in",
      "https://10.1.2.3/in",
      "https://100.64.0.1/in",
      "https://169.254.169.254/latest",
      "https://192.168.1.1/in",
      "https://0.0.0.0/in",
      "https://224.0.0.1/in",
      "https://198.18.0.1/in",
      "https://192.0.2.1/in",
      "https://[::1]/in",
      "https://[::]/in",
      "https://[fd00::1]/in",
      "https://[fe80::1]/in",
      "https://[::ffff:7f00:1]/in",
      "https://[64:ff9b::a00:1]/in",
      "https://[2002:c0a8:101::1]/in",
      "https://[2001:db8::1]/in",
    ];
    for (const url of refused) {
      const message = await expectError(
        await call(h, "POST", "/webhooks", { url }),
        400,
        "invalid_webhook_url",
        { mentions: "url" },
      );
      assert.ok(!message.includes("user:pw"), message);
      await expectError(
        await call(h, "PATCH", `/webhooks/${id}`, { url }),
        400,
        "invalid_webhook_url",
      );
    }
    // A name is resolved at each attempt, not now: "localhost" is accepted here.
    for (
      const url of [
        "https://localhost:9443/in",
        "https://hooks.example",
        "https://8.8.8.8/in",
        "https://[2606:4700::1]/in",
      ]
    ) {
      await add(h, { url });
    }
    assert.equal(
      (await (await call(h, "GET", `/webhooks/${id}`)).json()).url,
      "https://hooks.example/in",
    );
  });
  await withApp({ env: HTTP_PRIVATE }, async (h) => {
    for (const url of ["http://127.0.0.1:8080/in", "http://[::1]:9000/", "https://10.0.0.1/in"]) {
      await add(h, { url });
    }
  });
});

Deno.test("at most 100 endpoints: the 101st is too_many_webhooks until one is removed", async () => {
  await withApp({}, async (h) => {
    const ids = [];
    for (let i = 0; i < 100; i++) {
      ids.push((await add(h, { url: `https://hooks.example/${i}` })).id);
    }
    await expectError(
      await call(h, "POST", "/webhooks", { url: "https://hooks.example/x" }),
      400,
      "too_many_webhooks",
    );
    const removed = await call(h, "DELETE", `/webhooks/${ids[42]}`);
    assert.equal(removed.status, 204);
    assert.equal(await removed.text(), "");
    await expectError(await call(h, "GET", `/webhooks/${ids[42]}`), 404, "not_found");
    await add(h, { url: "https://hooks.example/x" });
    assert.equal((await (await call(h, "GET", "/webhooks")).json()).items.length, 100);
  });
});

Deno.test("PATCH changes url, events, description and status; the rest stays", async () => {
  await withApp({}, async (h) => {
    const created = await add(h, { url: "https://hooks.example/in", description: "a" });
    const path = `/webhooks/${created.id}`;
    const paused = await (await call(h, "PATCH", path, { status: "paused" })).json();
    assert.equal(paused.status, "paused");
    const changed = await (await call(h, "PATCH", path, {
      url: "https://other.example/hook",
      events: ["intent.pending"],
      description: "",
    })).json();
    assert.deepEqual(
      [changed.url, changed.events, changed.description, changed.status],
      ["https://other.example/hook", ["intent.pending"], "", "paused"],
    );
    const resumed = await (await call(h, "PATCH", path, { status: "active", events: null })).json();
    assert.deepEqual([resumed.status, resumed.events], ["active", null]);
    assert.equal(resumed.created_at, created.created_at);
    const same = await call(h, "PATCH", path, {});
    assert.equal(same.status, 200);
    assert.deepEqual(await same.json(), resumed);
  });
});

Deno.test("a rotation answers only the new secret; replays move after, next_event and lag", async () => {
  await withApp({}, async (h) => {
    const created = await add(h, { url: "https://hooks.example/in", events: ["intent.accepted"] });
    const path = `/webhooks/${created.id}`;
    const rotated = await call(h, "POST", `${path}/secret`);
    const body = await rotated.json();
    assert.equal(rotated.status, 200);
    assert.deepEqual(Object.keys(body), ["secret"]);
    assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.notEqual(body.secret, created.secret);
    await submitN(h, 4);
    const now = await (await call(h, "GET", path)).json();
    assert.deepEqual([now.after, now.next_event, now.lag], [null, "1", 4]);
    const replayed = await (await call(h, "POST", `${path}/replay`, { after: "2" })).json();
    assert.deepEqual([replayed.after, replayed.next_event, replayed.lag], ["2", "3", 2]);
    const fromStart = await (await call(h, "POST", `${path}/replay`, { after: null })).json();
    assert.deepEqual([fromStart.after, fromStart.next_event, fromStart.lag], [null, "1", 4]);
    const forward = await (await call(h, "POST", `${path}/replay`, { after: "4" })).json();
    assert.deepEqual([forward.after, forward.next_event, forward.lag], ["4", null, 0]);
    for (const after of ["5", "0", "01", "abc", "", 3]) {
      await expectError(await call(h, "POST", `${path}/replay`, { after }), 400, "invalid_body", {
        mentions: "after",
      });
    }
    await expectError(await call(h, "POST", `${path}/replay`, {}), 400, "invalid_body", {
      mentions: "after",
    });
    // An endpoint of other types: no next event among events it does not receive, though they lag.
    const expiries = await add(h, { url: "https://hooks.example/in", events: ["intent.expired"] });
    const other = await (await call(h, "POST", `/webhooks/${expiries.id}/replay`, { after: null }))
      .json();
    assert.deepEqual([other.next_event, other.lag], [null, 4]);
  });
});

Deno.test("GET /webhooks/{id}/attempts: an empty log, limit 1 to 100, no other parameter", async () => {
  await withApp({}, async (h) => {
    const { id } = await add(h, { url: "https://hooks.example/in" });
    const empty = await call(h, "GET", `/webhooks/${id}/attempts`);
    assert.equal(empty.status, 200);
    assert.deepEqual(await empty.json(), { items: [] });
    assert.deepEqual(await h.client.webhooks.attempts(id, { limit: 100 }), []);
    for (const query of ["limit=0", "limit=101", "limit=x", "after=1", "limit=1&limit=2"]) {
      await expectError(
        await call(h, "GET", `/webhooks/${id}/attempts?${query}`),
        400,
        "invalid_body",
      );
    }
    await expectError(await call(h, "GET", "/webhooks?limit=1"), 400, "invalid_body");
  });
});

Deno.test("the client library makes every webhook call", async () => {
  await withApp({}, async (h) => {
    const webhooks = h.client.webhooks;
    const created = await webhooks.add({ url: "https://hooks.example/in", description: "c" });
    assert.match(created.secret, /^whsec_/);
    assert.deepEqual((await webhooks.list()).map((e) => e.id), [created.id]);
    assert.equal((await webhooks.pause(created.id)).status, "paused");
    assert.equal((await webhooks.resume(created.id)).status, "active");
    assert.equal((await webhooks.update(created.id, { description: "d" })).description, "d");
    assert.notEqual(await webhooks.rotateSecret(created.id), created.secret);
    assert.match(await webhooks.rotateSecret(created.id, { overlapS: 60 }), /^whsec_/);
    assert.equal((await webhooks.replay(created.id, null)).after, null);
    assert.equal((await webhooks.get(created.id)).id, created.id);
    await webhooks.remove(created.id);
    await assert.rejects(webhooks.get(created.id), { name: "IntentsError", code: "not_found" });
    await assert.rejects(webhooks.add({ url: "http://hooks.example/" }), {
      name: "IntentsError",
      code: "invalid_webhook_url",
    });
  });
});

Deno.test("a rotation's optional body: overlap_s bounds the older secrets; bad bodies are refused first", async () => {
  const now = Date.UTC(2026, 0, 1);
  await withApp({ now: () => new Date(now) }, async (h) => {
    const created = await add(h, { url: "https://hooks.example/in" });
    const path = `/webhooks/${created.id}/secret`;
    const ends = async () =>
      (await h.app.context.webhooks.getEndpoint(created.id))!.endpoint.secrets
        .map((s) => s.expiresAt);
    // No body, and {}: the day of the default.
    assert.equal((await call(h, "POST", path)).status, 200);
    assert.deepEqual(await ends(), [null, now + 86_400_000]);
    assert.equal((await call(h, "POST", path, {})).status, 200);
    assert.deepEqual(await ends(), [null, now + 86_400_000, now + 86_400_000]);
    // An hour bounds every older secret.
    assert.equal((await call(h, "POST", path, { overlap_s: 3600 })).status, 200);
    assert.deepEqual(await ends(), [null, now + 3_600_000, now + 3_600_000, now + 3_600_000]);
    // Refused before anything changes: shape, range, strict JSON, the content type.
    for (const body of [{ overlap_s: -1 }, { overlap_s: 86_401 }, { overlap_s: 1.5 }, { x: 1 }]) {
      await expectError(await call(h, "POST", path, body), 400, "invalid_body");
    }
    await expectError(
      await call(h, "POST", path, '{"overlap_s":1,"overlap_s":2}'),
      400,
      "invalid_json",
    );
    const text = await h.fetch(path, {
      method: "POST",
      headers: { authorization: h.auth, "content-type": "text/plain" },
      body: "overlap_s=0",
    });
    await expectError(text, 415, "unsupported_media_type");
    assert.equal((await ends()).length, 4);
    // 0: only the new secret is left.
    const started = performance.now();
    const leaked = await call(h, "POST", path, { overlap_s: 0 });
    assert.equal(leaked.status, 200);
    assert.ok(performance.now() - started >= 1_000, "answered once every deliverer complies");
    assert.deepEqual(await ends(), [null]);
    await expectError(
      await call(h, "POST", `/webhooks/wh_00000000000000000000000000000000/secret`, {
        overlap_s: 0,
      }),
      404,
      "not_found",
    );
  });
});
