/**
 * The HTTP edge on the whole app: strict JSON, media type, body size and the
 * order of those checks, unknown paths and methods, request ids, the health
 * check. (A 500 is proven in tests/app/error_mapper_test.ts; the request log
 * on the server's stdout in tests/e2e/request_log_stdout_test.ts.)
 */

import assert from "node:assert/strict";
import { ed25519Signature, generateEd25519Key, signVariantA } from "../../client/mod.ts";
import { expectCreated, expectError, newPayload, streamOf } from "../support/fixtures.ts";
import { withApp } from "../support/in_process.ts";

const MAX_BODY_BYTES = 2048;
const encoder = new TextEncoder();

const key = generateEd25519Key();

/**
 * A signed Variant A body whose attrs.fields are `fieldsText` verbatim, so
 * that number spellings and escapes reach the server as written. The
 * signature is valid whenever the client can canonicalize those fields.
 */
function signedWithFields(templateId: string, fieldsText: string): string {
  const placeholder = { placeholder: 0 };
  const payload = newPayload(templateId, { attrs: { fields: placeholder } });
  let signature;
  try {
    signature = ed25519Signature({ ...payload, attrs: { fields: JSON.parse(fieldsText) } }, key);
  } catch {
    // Infinity or a lone surrogate: the server must refuse the text before any signature check.
    signature = ed25519Signature(payload, key);
  }
  return JSON.stringify({ payload, signature }).replace(JSON.stringify(placeholder), fieldsText);
}

Deno.test("HTTP edge", async (t) => {
  await withApp({ env: { MAX_BODY_BYTES: String(MAX_BODY_BYTES) } }, async (h) => {
    const templateId = await h.newTemplate();

    // ---- invalid_json ----

    const invalidJson = async (body: string | Uint8Array, secret?: string) => {
      const message = await expectError(await h.submit(body), 400, "invalid_json", {
        notEcho: secret,
      });
      return message;
    };

    await t.step("rejects invalid UTF-8 with invalid_json", async () => {
      const text = signVariantA(newPayload(templateId), generateEd25519Key());
      const bytes = encoder.encode(JSON.stringify(text));
      const at = bytes.indexOf(0x69, /* i */ 20);
      const bad = new Uint8Array([...bytes.subarray(0, at), 0xff, ...bytes.subarray(at + 1)]);
      await invalidJson(bad);
      // An overlong encoding of "/" and an encoded surrogate are invalid too.
      await invalidJson(new Uint8Array([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d]));
      await invalidJson(new Uint8Array([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]));
    });

    await t.step("rejects a duplicate member name anywhere with invalid_json", async () => {
      const body = JSON.stringify(signVariantA(newPayload(templateId), generateEd25519Key()));
      await invalidJson(body.replace(/^\{/, '{"payload":1,'));
      await invalidJson(body.replace('"id":', '"id":"x","id":'));
      await invalidJson(signedWithFields(templateId, '{"a":1,"b":{"c":1,"c":2}}'));
      // Escaped spellings of one name are the same name.
      await invalidJson(signedWithFields(templateId, '{"a":1,"\\u0061":2}'));
    });

    await t.step("rejects a lone surrogate escape with invalid_json", async () => {
      await invalidJson(signedWithFields(templateId, '{"a":"\\ud800"}'));
      await invalidJson(signedWithFields(templateId, '{"a":"\\udc00x"}'));
      await invalidJson(signedWithFields(templateId, '{"a":"\\ud800\\u0041"}'));
      // A proper pair is fine.
      await expectCreated(await h.submit(signedWithFields(templateId, '{"a":"\\ud83d\\ude00"}')));
    });

    await t.step("rejects nesting deeper than 32 with invalid_json", async () => {
      // body(1) payload(2) attrs(3) fields(4): 28 more arrays reach 32, 29 reach 33.
      const nest = (n: number) => `{"v":${"[".repeat(n)}${"]".repeat(n)}}`;
      await expectCreated(await h.submit(signedWithFields(templateId, nest(28))));
      await invalidJson(signedWithFields(templateId, nest(29)));
      await invalidJson("[".repeat(33) + "]".repeat(33));
      const deep32 = await h.submit("[".repeat(32) + "]".repeat(32));
      await expectError(deep32, 400, "invalid_body");
      await invalidJson("[".repeat(MAX_BODY_BYTES));
    });

    await t.step(
      "rejects an integer literal outside ±(2^53−1) that JCS writes otherwise, with a hint",
      async () => {
        for (
          const n of [
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "123456789012345678901234567890",
          ]
        ) {
          const message = await invalidJson(signedWithFields(templateId, `{"n":${n}}`));
          assert.match(message, /string/);
        }
        await expectCreated(
          await h.submit(
            signedWithFields(templateId, '{"max":9007199254740991,"min":-9007199254740991}'),
          ),
        );
      },
    );

    await t.step(
      "accepts a large integer literal written as JavaScript writes it, signed as sent",
      async () => {
        // JSON.stringify(1e20) and JSON.stringify(1.2345678901234568e20), 2^53.
        const fields =
          '{"a":100000000000000000000,"b":123456789012345680000,"c":-9007199254740992}';
        const record = await expectCreated(await h.submit(signedWithFields(templateId, fields)));
        assert.deepEqual((record.attrs as { fields: unknown }).fields, {
          a: 1e20,
          b: 1.2345678901234568e20,
          c: -(2 ** 53),
        });
      },
    );

    await t.step("rejects a number that overflows to infinity with invalid_json", async () => {
      await invalidJson(signedWithFields(templateId, '{"n":1e400}'));
      await invalidJson(signedWithFields(templateId, '{"n":-1.8e308}'));
    });

    await t.step("accepts 1e+21 and 1.7976931348623157e+308 as ordinary doubles", async () => {
      const text = signedWithFields(
        templateId,
        '{"a":1e+21,"b":1.7976931348623157e+308,"c":9007199254740993.0,"d":5e-324}',
      );
      const record = await expectCreated(await h.submit(text));
      assert.deepEqual(record.request, JSON.parse(text));
      assert.deepEqual((record.attrs as { fields: unknown }).fields, {
        a: 1e21,
        b: 1.7976931348623157e308,
        c: 9007199254740992,
        d: 5e-324,
      });
    });

    await t.step("rejects malformed JSON without echoing it", async () => {
      const secret = "SECRET-f00d-b33f";
      await invalidJson(`{"payload":{"id":"${secret}"`, secret);
      await invalidJson(`{"payload":'${secret}'}`, secret);
      await invalidJson(`{"a":1} ${secret}`, secret);
      await invalidJson("");
      await invalidJson("\ufeff{}");
      await invalidJson('{"a":NaN}');
    });

    // ---- media type and size ----

    await t.step("answers a missing or other Content-Type with 415", async () => {
      const body = JSON.stringify(signVariantA(newPayload(templateId), generateEd25519Key()));
      const noType = await h.fetch("/intents", {
        method: "POST",
        body: encoder.encode(body),
      });
      await expectError(noType, 415, "unsupported_media_type");
      for (const type of ["text/plain", "application/jsonx", "application/x-www-form-urlencoded"]) {
        await expectError(
          await h.submit(body, { "content-type": type }),
          415,
          "unsupported_media_type",
        );
      }
    });

    await t.step("accepts application/json with a charset parameter", async () => {
      const body = JSON.stringify(signVariantA(newPayload(templateId), generateEd25519Key()));
      const res = await h.submit(body, { "content-type": "application/json; charset=utf-8" });
      await expectCreated(res);
    });

    await t.step("answers a body over MAX_BODY_BYTES with 413", async () => {
      const over = JSON.stringify({ pad: "x".repeat(MAX_BODY_BYTES) });
      await expectError(await h.submit(over), 413, "payload_too_large");
      const streamed = await h.fetch("/intents", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: streamOf(MAX_BODY_BYTES * 4),
      });
      await expectError(streamed, 413, "payload_too_large");
    });

    await t.step("accepts a body of exactly MAX_BODY_BYTES", async () => {
      // Signature lengths in base58 vary by a character or two: adjust the pad until exact.
      let padLength = 0;
      let text = "";
      for (let tries = 0; tries < 20; tries++) {
        text = signedWithFields(templateId, `{"pad":"${"p".repeat(padLength)}"}`);
        const size = encoder.encode(text).length;
        if (size === MAX_BODY_BYTES) break;
        padLength = Math.max(0, padLength + MAX_BODY_BYTES - size);
      }
      assert.equal(encoder.encode(text).length, MAX_BODY_BYTES);
      await expectCreated(await h.submit(text));
    });

    await t.step("checks 415 before 413 before 400", async () => {
      const bigInvalid = "{" + "x".repeat(MAX_BODY_BYTES * 2);
      await expectError(
        await h.submit(bigInvalid, { "content-type": "text/plain" }),
        415,
        "unsupported_media_type",
      );
      await expectError(await h.submit(bigInvalid), 413, "payload_too_large");
      await expectError(await h.submit("{" + "x".repeat(100)), 400, "invalid_json");
    });

    // ---- routing ----

    await t.step("answers an unknown path with 404 not_found", async () => {
      for (const path of ["/nope", "/intents/a/b", "/templates/", "/healthz/x"]) {
        await expectError(await h.fetch(path), 404, "not_found");
      }
    });

    await t.step("answers an unknown template or policy with 404 not_found", async () => {
      await expectError(
        await h.fetch("/templates/11111111111111111111111111111111"),
        404,
        "not_found",
      );
      await expectError(await h.fetch("/policies/NoSuchPolicy"), 404, "not_found");
    });

    await t.step("answers a method the path does not have with 405 and Allow", async () => {
      const cases: [string, string, string[]][] = [
        ["DELETE", "/intents", ["GET", "POST"]],
        ["PUT", "/intents/x", ["GET"]],
        ["GET", "/templates", ["POST"]],
        ["DELETE", "/templates/x", ["GET"]],
        ["PUT", "/policies/x", ["GET"]],
        ["POST", "/config", ["GET", "PUT"]],
        ["POST", "/healthz", ["GET"]],
      ];
      for (const [method, path, allowed] of cases) {
        const res = await h.fetch(path, { method, headers: { authorization: h.auth } });
        const allow = (res.headers.get("allow") ?? "").split(",").map((s) => s.trim());
        await expectError(res, 405, "method_not_allowed");
        for (const m of allowed) assert.ok(allow.includes(m), `${path}: Allow ${allow}`);
        assert.ok(!allow.includes(method));
      }
    });

    // ---- health, request ids ----

    await t.step("answers GET /healthz with 200 {status: ok}", async () => {
      const res = await h.fetch("/healthz");
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type")?.split(";")[0], "application/json");
      assert.deepEqual(await res.json(), { status: "ok" });
    });

    await t.step("echoes X-Request-Id, or generates one", async () => {
      const given = `req-${crypto.randomUUID()}`;
      const echoed = await h.fetch("/healthz", { headers: { "x-request-id": given } });
      await echoed.body?.cancel();
      assert.equal(echoed.headers.get("x-request-id"), given);
      const made = await h.fetch("/healthz");
      await made.body?.cancel();
      const id = made.headers.get("x-request-id");
      assert.ok(id && id.length >= 8, `generated id ${id}`);
      const again = await h.fetch("/healthz");
      await again.body?.cancel();
      assert.notEqual(again.headers.get("x-request-id"), id);
      // Error answers carry it too.
      const error = await h.fetch("/nope", { headers: { "x-request-id": given } });
      await error.body?.cancel();
      assert.equal(error.headers.get("x-request-id"), given);
    });
  });
});
