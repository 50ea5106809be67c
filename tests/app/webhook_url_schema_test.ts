/**
 * The webhook URL's schema in the OpenAPI document as served (docs/interface.md §11):
 * it follows the `WEBHOOKS_ALLOW_HTTP` the process runs with, and a URL in its
 * normal form is valid by it exactly when the URL rule accepts it, so that no
 * schema-valid URL is refused for its form. Addresses are a run-time matter:
 * the rule is asked with private addresses allowed.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import type { ValidateFunction } from "ajv/dist/2020.js";
import { checkWebhookUrl } from "../../src/webhooks/url.ts";
import { type AppHarness, withApp } from "../support/in_process.ts";
import { ajvFor, DOC_ID } from "../support/openapi_ajv.ts";

const SETTINGS = [false, true] as const;

/** The served document's `WebhookCreate` and `WebhookUpdate`, as validators of a URL. */
async function servedUrlSchemas(h: AppHarness): Promise<((url: string) => boolean)[]> {
  const response = await h.fetch("/openapi.json");
  assert.equal(response.status, 200);
  const ajv = ajvFor(await response.json());
  return ["WebhookCreate", "WebhookUpdate"].map((name) => {
    const valid = ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`) as ValidateFunction;
    return (url: string) => valid({ url }) === true;
  });
}

/** A process with `WEBHOOKS_ALLOW_HTTP` as given; no deliverer runs. */
function withSetting(allowHttp: boolean, fn: (h: AppHarness) => Promise<void>): Promise<void> {
  const env = { WEBHOOKS_ALLOW_HTTP: String(allowHttp), WEBHOOKS_ALLOW_PRIVATE: "true" };
  return withApp({ env, background: false }, fn);
}

const accepts = (url: string, allowHttp: boolean) =>
  checkWebhookUrl(url, { allowHttp, allowPrivate: true }) === null;

/** Mostly in their normal form (or with the `/` of an empty path left out), varied in what a pattern can see. */
const EXAMPLES = [
  "https://hooks.example/in",
  "https://hooks.example",
  "https://hooks.example?team=7",
  "https://hooks.example/in?team=7&a=b@c",
  "https://hooks.example:8443/in",
  "https://203.0.113.9/in",
  "https://[2001:db8::1]/in",
  "https://xn--bcher-kva.example/",
  "https://hooks.example/%C3%A9?%7B%7D",
  "http://hooks.example/in",
  "http://hooks.example?team=7",
  "http://127.0.0.1:8080/",
  "https://hooks.example/in#top",
  "https://hooks.example/#",
  "https://hooks.example#top",
  "http://hooks.example/in#top",
  "https://user@hooks.example/",
  "https://user:secret@hooks.example/in",
  "http://user@hooks.example/",
  "ftp://hooks.example/",
  "ws://hooks.example/",
  "hooks.example/in",
  // Not in its normal form, in ways a pattern can see: refused by both.
  "https://HOOKS.example/in",
  "https://hooks%2Eexample/",
  "https://hooks.example/{in}",
  "https://hooks.example/?q=<a>",
  "https://hooks.example:0443/",
  `https://hooks.example/${"a".repeat(2048 - 22)}`,
  `https://hooks.example/${"a".repeat(2049 - 22)}`,
];

Deno.test("the served webhook URL schema accepts exactly what the URL rule accepts, with and without WEBHOOKS_ALLOW_HTTP", async () => {
  for (const allowHttp of SETTINGS) {
    await withSetting(allowHttp, async (h) => {
      const schemas = await servedUrlSchemas(h);
      let both = 0;
      for (const url of EXAMPLES) {
        const expected = accepts(url, allowHttp);
        if (expected) both++;
        for (const valid of schemas) {
          assert.equal(valid(url), expected, `${url.slice(0, 60)} (allowHttp: ${allowHttp})`);
        }
        // The process itself: a schema-valid URL is stored, any other refused as a URL.
        const response = await h.fetch("/webhooks", {
          method: "POST",
          headers: { authorization: h.auth, "content-type": "application/json" },
          body: JSON.stringify({ url }),
        });
        const body = await response.json();
        assert.equal(response.status, expected ? 201 : 400, url.slice(0, 60));
        if (expected) {
          const deleted = await h.fetch(`/webhooks/${body.id}`, {
            method: "DELETE",
            headers: { authorization: h.auth },
          });
          assert.equal(deleted.status, 204);
        } else {
          assert.equal(body.code, "invalid_webhook_url", url.slice(0, 60));
        }
      }
      assert.equal(both, allowHttp ? 13 : 10, "examples accepted");
    });
  }
});

const AUTHORITIES = { withIPv4: true, withIPv6: true, withIPv4Extended: true, withPort: true };

/** URLs in their normal form, as the URL parser writes them, of every scheme the rule sees. */
const normalUrls = fc.oneof(
  {
    arbitrary: fc.webUrl({
      validSchemes: ["https", "http"],
      withQueryParameters: true,
      authoritySettings: AUTHORITIES,
    }),
    weight: 4,
  },
  fc.webUrl({ validSchemes: ["https", "http"], withFragments: true }),
  fc.webUrl({
    validSchemes: ["https", "http"],
    authoritySettings: { ...AUTHORITIES, withUserInfo: true },
  }),
  fc.webUrl({ validSchemes: ["ftp", "wss", "ws", "file"], withQueryParameters: true }),
).chain((url) => {
  let href: string;
  try {
    href = new URL(url).href;
  } catch {
    return fc.constant(null);
  }
  // Some with the `/` of an empty path left out, which the rule forgives too.
  return fc.constantFrom(href, href.replace(/^(\w+:\/\/[^/?#]*)\/([?#]|$)/, "$1$2"));
}).filter((url): url is string => url !== null);

Deno.test("a URL in its normal form is valid by the served schema exactly when the rule accepts it", async () => {
  for (const allowHttp of SETTINGS) {
    await withSetting(allowHttp, async (h) => {
      const schemas = await servedUrlSchemas(h);
      const seen = { accepted: 0, refused: 0 };
      fc.assert(
        fc.property(normalUrls, (url) => {
          const expected = accepts(url, allowHttp);
          seen[expected ? "accepted" : "refused"]++;
          return schemas.every((valid) => valid(url) === expected);
        }),
        { numRuns: 2_000 },
      );
      assert.ok(seen.accepted > 300 && seen.refused > 300, JSON.stringify(seen));
    });
  }
});
