/** Unit tests of `readSettings`: defaults and one refusal per malformed variable. */

import assert from "node:assert/strict";
import { readSettings } from "../../src/settings.ts";
import { SettingsError } from "../../src/errors.ts";
import { generateNoteKey } from "../../protocol/log/note.ts";
import { generateCosignerKey } from "../../protocol/log/cosignature.ts";

/** A log signer key, which a start where DENO_DEPLOY=true needs. */
const LOG_SIGNING_KEY = generateNoteKey("deploy.test/intents").signerKey;

Deno.test("readSettings applies the documented defaults", () => {
  const s = readSettings({});
  assert.equal(s.port, 8000);
  assert.equal(s.hostname, "0.0.0.0");
  assert.equal(s.kvPath, undefined);
  assert.equal(s.adminTokenGenerated, true);
  assert.ok(s.adminToken.length >= 32);
  assert.equal(s.allowUnsigned, false);
  assert.equal(s.evidenceExtractorUrl, "http://localhost:8081");
  assert.deepEqual(s.passkeyRpIds, ["localhost"]);
  assert.deepEqual(s.passkeyOrigins, ["http://localhost:8000"]);
  assert.equal(s.passkeyRequireUv, false);
  assert.equal(s.maxBodyBytes, 32768);
  assert.equal(s.shutdownTimeoutMs, 10000);
  // The abuse limits are on unless turned off (docs/interface.md §12).
  assert.deepEqual(s.limits, {
    ratePerAddress: 50,
    ratePerSigner: 10,
    authFailuresPerMinute: 20,
    trustedProxies: [],
    maxPendingPerSigner: 100,
  });
});

Deno.test("readSettings reads the limits, and refuses a malformed one naming it", () => {
  const s = readSettings({
    RATE_LIMIT_PER_ADDRESS: "0",
    RATE_LIMIT_PER_SIGNER: "3",
    TRUSTED_PROXIES: "10.0.0.0/8",
    MAX_PENDING_PER_SIGNER: "7",
  });
  assert.equal(s.limits.ratePerAddress, 0);
  assert.equal(s.limits.ratePerSigner, 3);
  assert.equal(s.limits.trustedProxies.length, 1);
  assert.equal(s.limits.maxPendingPerSigner, 7);
  for (const name of ["RATE_LIMIT_PER_ADDRESS", "TRUSTED_PROXIES", "MAX_PENDING_PER_SIGNER"]) {
    assert.throws(() => readSettings({ [name]: "x" }), (error: unknown) => {
      assert.ok(error instanceof SettingsError);
      assert.ok(error.message.startsWith(name), error.message);
      return true;
    });
  }
});

Deno.test("readSettings derives the default passkey origin from PORT", () => {
  assert.deepEqual(readSettings({ PORT: "9123" }).passkeyOrigins, ["http://localhost:9123"]);
});

Deno.test("readSettings reads every variable", () => {
  const s = readSettings({
    PORT: "8080",
    HOSTNAME: "127.0.0.1",
    KV_PATH: ":memory:",
    ADMIN_TOKEN: "a-token-of-enough-length",
    ALLOW_UNSIGNED: "true",
    EVIDENCE_EXTRACTOR_URL: "https://extractor.example/v1",
    PASSKEY_RP_IDS: "example.com, login.example.com",
    PASSKEY_ORIGINS: "https://example.com,https://login.example.com:8443",
    PASSKEY_REQUIRE_UV: "true",
    MAX_BODY_BYTES: "4096",
    SHUTDOWN_TIMEOUT_MS: "2500",
    EVENTS_TOKEN: "an-events-token-of-length",
    EVENTS_KEEPALIVE_MS: "5000",
    VERIFY_WORKERS: "3",
  });
  assert.equal(s.port, 8080);
  assert.equal(s.hostname, "127.0.0.1");
  assert.equal(s.kvPath, ":memory:");
  assert.equal(s.adminToken, "a-token-of-enough-length");
  assert.equal(s.adminTokenGenerated, false);
  assert.equal(s.allowUnsigned, true);
  assert.equal(s.evidenceExtractorUrl, "https://extractor.example/v1");
  assert.deepEqual(s.passkeyRpIds, ["example.com", "login.example.com"]);
  assert.deepEqual(s.passkeyOrigins, ["https://example.com", "https://login.example.com:8443"]);
  assert.equal(s.passkeyRequireUv, true);
  assert.equal(s.maxBodyBytes, 4096);
  assert.equal(s.shutdownTimeoutMs, 2500);
  assert.equal(s.eventsToken, "an-events-token-of-length");
  assert.equal(s.eventsKeepaliveMs, 5000);
  assert.equal(s.verifyWorkers, 3);
  // Unset: only the admin token reads the feed; idle streams comment every 10 s.
  assert.equal(readSettings({}).eventsToken, undefined);
  assert.equal(readSettings({}).eventsKeepaliveMs, 10_000);
});

Deno.test("VERIFY_WORKERS defaults to one worker from three CPUs on, none below", () => {
  assert.deepEqual([1, 2, 3, 4, 64].map((cpus) => readSettings({}, cpus).verifyWorkers), [
    0,
    0,
    1,
    1,
    1,
  ]);
  assert.equal(readSettings({ VERIFY_WORKERS: "0" }, 16).verifyWorkers, 0);
  assert.equal(readSettings({ VERIFY_WORKERS: "8" }, 2).verifyWorkers, 8);
});

Deno.test("readSettings makes a new token on each call when ADMIN_TOKEN is unset", () => {
  assert.notEqual(readSettings({}).adminToken, readSettings({}).adminToken);
});

const MALFORMED: [string, string][] = [
  ["PORT", "abc"],
  ["PORT", "65536"],
  ["PORT", "80.5"],
  ["ALLOW_UNSIGNED", "maybe"],
  ["ALLOW_UNSIGNED", "TRUE"],
  ["PASSKEY_REQUIRE_UV", "1"],
  ["EVIDENCE_EXTRACTOR_URL", "ftp://x"],
  ["EVIDENCE_EXTRACTOR_URL", ""],
  ["EVIDENCE_EXTRACTOR_URL", "https://x.example/#f"],
  ["EVIDENCE_EXTRACTOR_URL", "http://0x7f.1/"],
  ["EVIDENCE_EXTRACTOR_URL", "http://EXAMPLE.com"],
  ["MAX_BODY_BYTES", "0"],
  ["MAX_BODY_BYTES", "1000000"],
  ["PASSKEY_ORIGINS", "not-an-origin"],
  ["PASSKEY_ORIGINS", "https://x.example/"],
  ["PASSKEY_ORIGINS", "https://x.example,"],
  ["VERIFY_WORKERS", "9"],
  ["VERIFY_WORKERS", "-1"],
  ["VERIFY_WORKERS", "auto"],
  ["SHUTDOWN_TIMEOUT_MS", "soon"],
  ["SHUTDOWN_TIMEOUT_MS", "0"],
  ["SHUTDOWN_TIMEOUT_MS", "1.5"],
  ["SHUTDOWN_TIMEOUT_MS", "600001"],
  ["EVENTS_TOKEN", "short"],
  ["EVENTS_TOKEN", "an events token with spaces"],
  ["EVENTS_KEEPALIVE_MS", "999"],
  ["EVENTS_KEEPALIVE_MS", "15001"],
  ["ADMIN_TOKEN", "short"],
  ["ADMIN_TOKEN", "a token with spaces inside"],
];

for (const [name, value] of MALFORMED) {
  Deno.test(`readSettings refuses ${name}=${JSON.stringify(value)} naming ${name}`, () => {
    assert.throws(
      () => readSettings({ [name]: value }),
      (e: unknown) =>
        e instanceof SettingsError && e.message.includes(name) && !e.message.includes("\n"),
    );
  });
}

Deno.test("where DENO_DEPLOY=true, SHUTDOWN_TIMEOUT_MS defaults to 4000 (Deploy kills 5 s after SIGINT)", () => {
  assert.equal(readSettings({ DENO_DEPLOY: "true", LOG_SIGNING_KEY }).shutdownTimeoutMs, 4000);
  assert.equal(readSettings({ DENO_DEPLOY: "1" }).shutdownTimeoutMs, 10000);
  assert.equal(
    readSettings({ DENO_DEPLOY: "true", LOG_SIGNING_KEY, SHUTDOWN_TIMEOUT_MS: "3000" })
      .shutdownTimeoutMs,
    3000,
  );
});

Deno.test("the log's settings: LOG_SIGNING_KEY, LOG_ORIGIN, LOG_PUBLIC, and what stops a start", () => {
  const { signerKey } = generateNoteKey("example.com/log");
  const given = readSettings({ LOG_SIGNING_KEY: signerKey }).log;
  assert.equal(given.origin, "example.com/log");
  assert.ok(given.signer);
  assert.equal(given.public, false);
  assert.equal(readSettings({}).log.origin, "localhost/intents");
  assert.equal(readSettings({}).log.signer, undefined);
  assert.equal(readSettings({ LOG_ORIGIN: "example.org/x" }).log.origin, "example.org/x");
  assert.equal(readSettings({ LOG_PUBLIC: "true" }).log.public, true);
  // The settings hold the signer, never the key's text.
  // The key's base64 may itself hold "+": everything after the fourth separator.
  assert.ok(!JSON.stringify(given).includes(signerKey.split("+").slice(4).join("+")));
  const refusals: [Record<string, string>, RegExp][] = [
    [{ LOG_SIGNING_KEY: "PRIVATE+KEY+x+00000000+AQ==" }, /^LOG_SIGNING_KEY must be/],
    [{ LOG_SIGNING_KEY: signerKey, LOG_ORIGIN: "other/log" }, /^LOG_ORIGIN must equal/],
    [{ LOG_ORIGIN: "has space" }, /^LOG_ORIGIN must be/],
    [{ DENO_DEPLOY: "true" }, /^LOG_SIGNING_KEY must be set where DENO_DEPLOY=true/],
    [{ LOG_PUBLIC: "yes" }, /^LOG_PUBLIC must be/],
    [{ LOG_WITNESS_QUORUM: "1" }, /^LOG_WITNESS_QUORUM/],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => readSettings(env),
      (e) => e instanceof SettingsError && message.test(e.message),
    );
  }
  const malformed = "PRIVATE+KEY+x+00000000+AQ==";
  assert.throws(
    () => readSettings({ LOG_SIGNING_KEY: malformed }),
    (e) => e instanceof Error && !e.message.includes(malformed),
  );
});

Deno.test("the witness settings: LOG_WITNESSES and its quorum, timeout and insecure switch, and what stops a start", () => {
  const { signerKey } = generateNoteKey("example.com/log");
  const w1 = generateCosignerKey("w1.example/w").verifierKey;
  const w2 = generateCosignerKey("w2.example/w").verifierKey;
  const base = { LOG_SIGNING_KEY: signerKey, LOG_ORIGIN: "example.com/log" };
  const none = readSettings({}).log.witnesses;
  assert.deepEqual(none, { witnesses: [], quorum: 0, timeoutMs: 5000, allowInsecure: false });
  const two = readSettings({
    ...base,
    LOG_WITNESSES: `https://w1.example/api=${w1}, https://w2.example/=${w2}`,
    LOG_WITNESS_QUORUM: "2",
    LOG_WITNESS_TIMEOUT_MS: "1500",
  }).log.witnesses;
  assert.deepEqual(two.witnesses, [
    { url: "https://w1.example/api/add-checkpoint", key: w1, name: "w1.example/w" },
    { url: "https://w2.example/add-checkpoint", key: w2, name: "w2.example/w" },
  ]);
  assert.equal(two.quorum, 2);
  assert.equal(two.timeoutMs, 1500);
  const insecure = readSettings({
    ...base,
    LOG_WITNESSES: `http://127.0.0.1:8090=${w1}`,
    LOG_WITNESSES_ALLOW_INSECURE: "true",
  }).log.witnesses;
  assert.equal(insecure.witnesses[0].url, "http://127.0.0.1:8090/add-checkpoint");
  const fifteen = Array.from(
    { length: 16 },
    (_, i) => `https://w${i}.example=${generateCosignerKey(`w${i}.example/w`).verifierKey}`,
  );
  const refusals: [Record<string, string>, RegExp][] = [
    [
      { LOG_SIGNING_KEY: signerKey, LOG_WITNESSES: `https://w1.example=${w1}` },
      /^LOG_ORIGIN must be set explicitly/,
    ],
    [
      { LOG_ORIGIN: "example.com/log", LOG_WITNESSES: `https://w1.example=${w1}` },
      /^LOG_SIGNING_KEY must be set/,
    ],
    [
      { ...base, LOG_WITNESSES: `http://w1.example=${w1}` },
      /^LOG_WITNESSES: witness 1's URL prefix must be an absolute URL starting with https:\/\//,
    ],
    [
      { ...base, LOG_WITNESSES: `https://10.0.0.1=${w1}` },
      /^LOG_WITNESSES: witness 1's URL prefix must not name an address/,
    ],
    [
      { ...base, LOG_WITNESSES: `https://w1.example?x=1=${w1}` },
      /^LOG_WITNESSES: witness 1's URL prefix must have no query/,
    ],
    [
      { ...base, LOG_WITNESSES: `https://w1.example=${generateNoteKey("w1.example").verifierKey}` },
      /^LOG_WITNESSES: witness 1's key must be/,
    ],
    [{ ...base, LOG_WITNESSES: `https://w1.example` }, /^LOG_WITNESSES must be at most 15/],
    [
      { ...base, LOG_WITNESSES: `https://w1.example=${w1},https://w2.example=${w1}` },
      /^LOG_WITNESSES: two witnesses have the key/,
    ],
    [{ ...base, LOG_WITNESSES: fifteen.join(",") }, /^LOG_WITNESSES must be at most 15/],
    [
      { ...base, LOG_WITNESSES: `https://w1.example=${w1}`, LOG_WITNESS_QUORUM: "2" },
      /^LOG_WITNESS_QUORUM must be a whole number from 0 to 1/,
    ],
    [{ ...base, LOG_WITNESS_TIMEOUT_MS: "fast" }, /^LOG_WITNESS_TIMEOUT_MS must be/],
    [{ ...base, LOG_WITNESSES_ALLOW_INSECURE: "yes" }, /^LOG_WITNESSES_ALLOW_INSECURE must be/],
  ];
  for (const [env, message] of refusals) {
    assert.throws(
      () => readSettings(env),
      (e) => e instanceof SettingsError && message.test(e.message),
      JSON.stringify(env).slice(0, 120),
    );
  }
});
