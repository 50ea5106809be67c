/**
 * The content type `template add` and `policy add` send when `--content-type`
 * is not given: by the file's extension, or for standard input by whether it
 * is JSON.
 */

import assert from "node:assert/strict";
import { documentMediaType, MEDIA_TYPES_BY_EXTENSION } from "../../client/cli_media_type.ts";
import { HELP } from "../../client/cli_help.ts";

const JSON_TYPE = "application/json";
const TEXT = "text/plain; charset=utf-8";
const YAML = "application/yaml";
const OCTETS = "application/octet-stream";

const text = (s: string) => new TextEncoder().encode(s);
// Bytes that would be JSON were they looked at: a file's are not.
const jsonBytes = text('{"rules":"pay up to 100"}');

Deno.test("a file's content type follows its extension, in any case", () => {
  const cases: [path: string, expected: string][] = [
    ["policy.json", JSON_TYPE],
    ["POLICY.JSON", JSON_TYPE],
    ["dir/Policy.Json", JSON_TYPE],
    ["rules.txt", TEXT],
    ["rules.TXT", TEXT],
    ["README.md", TEXT],
    ["notes.Md", TEXT],
    ["policy.yaml", YAML],
    ["policy.YML", YAML],
    ["policy.yml", YAML],
    ["archive.tar.json", JSON_TYPE],
    ["policy.json.txt", TEXT],
    ["policy.txt.bak", OCTETS],
    ["policy.bin", OCTETS],
    ["policy.jsonl", OCTETS],
    ["policy.markdown", OCTETS],
    ["policy", OCTETS],
    ["policy.", OCTETS],
    // A dot file's name is not an extension.
    [".json", OCTETS],
    ["dir.json/policy", OCTETS],
    ["./policy.json", JSON_TYPE],
    ["/tmp/x/rules.txt", TEXT],
  ];
  for (const [path, expected] of cases) {
    assert.equal(documentMediaType(path, jsonBytes), expected, path);
    assert.equal(documentMediaType(path, text("plain words")), expected, `${path}, not JSON`);
  }
});

Deno.test("standard input is application/json when its UTF-8 text parses as JSON", () => {
  const cases: [what: string, bytes: Uint8Array, expected: string][] = [
    ["an object", jsonBytes, JSON_TYPE],
    [
      "a governed-looking object",
      text('{"authorization":{"signers":{},"threshold":1}}'),
      JSON_TYPE,
    ],
    ["an array", text("[1, 2]\n"), JSON_TYPE],
    ["a string", text('"pay"'), JSON_TYPE],
    ["a number", text("42"), JSON_TYPE],
    ["null", text("null"), JSON_TYPE],
    ["surrounded by whitespace", text(' \n\t{"a":1}\r\n'), JSON_TYPE],
    ["non-ASCII text", text('{"règle":"payer ≤ 100 €"}'), JSON_TYPE],
    // The service parses more strictly; it, not this guess, says what is wrong.
    ["duplicate members", text('{"a":1,"a":2}'), JSON_TYPE],
    ["an integer beyond 2^53", text("18446744073709551615"), JSON_TYPE],
    ["a leading byte order mark", text('\uFEFF{"a":1}'), JSON_TYPE],
    ["plain text", text("pay up to 100\n"), OCTETS],
    ["YAML", text("rules: pay up to 100\n"), OCTETS],
    ["JSON cut short", text('{"a":'), OCTETS],
    ["JSON followed by more", text('{"a":1} {"b":2}'), OCTETS],
    ["nothing", new Uint8Array(), OCTETS],
    ["whitespace only", text(" \n"), OCTETS],
    ["invalid UTF-8 around JSON", Uint8Array.of(0x22, 0xff, 0x22), OCTETS],
    ["a lone continuation byte", Uint8Array.of(0x80), OCTETS],
    ["binary", Uint8Array.of(0x00, 0x01, 0x02, 0xfe), OCTETS],
  ];
  for (const [what, bytes, expected] of cases) {
    assert.equal(documentMediaType("-", bytes), expected, what);
  }
});

Deno.test("the help of template add and policy add names every extension and its type", () => {
  for (const command of ["template add", "policy add"]) {
    for (const [extension, type] of Object.entries(MEDIA_TYPES_BY_EXTENSION)) {
      const line = HELP[command].split("\n").find((l) => l.includes(extension));
      assert.ok(line?.includes(type), `${command}: ${extension} → ${type}`);
    }
    assert.match(HELP[command], /--content-type TYPE/);
  }
});
