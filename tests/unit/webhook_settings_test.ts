/** Unit tests of the webhook settings of docs/interface.md §2 and §11, as `readSettings` reads them. */

import assert from "node:assert/strict";
import { readSettings, WEBHOOK_RETRY_SCHEDULE_MS } from "../../src/settings.ts";
import { SettingsError } from "../../src/errors.ts";

Deno.test("webhook settings default to https only, public addresses only, 15 s per attempt", () => {
  const s = readSettings({});
  assert.equal(s.webhooksAllowHttp, false);
  assert.equal(s.webhooksAllowPrivate, false);
  assert.equal(s.webhookTimeoutMs, 15_000);
  assert.deepEqual(s.webhookRetryScheduleMs, WEBHOOK_RETRY_SCHEDULE_MS);
});

Deno.test("the default retry schedule is §11's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h", () => {
  const s = 1000, min = 60 * s, h = 60 * min;
  assert.deepEqual(WEBHOOK_RETRY_SCHEDULE_MS, [
    5 * s,
    5 * min,
    30 * min,
    2 * h,
    5 * h,
    10 * h,
    10 * h,
  ]);
});

Deno.test("readSettings reads every webhook setting", () => {
  const s = readSettings({
    WEBHOOKS_ALLOW_HTTP: "true",
    WEBHOOKS_ALLOW_PRIVATE: "true",
    WEBHOOK_TIMEOUT_MS: "2500",
    WEBHOOK_RETRY_SCHEDULE_MS: "100, 200,0",
  });
  assert.equal(s.webhooksAllowHttp, true);
  assert.equal(s.webhooksAllowPrivate, true);
  assert.equal(s.webhookTimeoutMs, 2500);
  assert.deepEqual(s.webhookRetryScheduleMs, [100, 200, 0]);
});

const MALFORMED: [string, string][] = [
  ["WEBHOOKS_ALLOW_HTTP", "yes"],
  ["WEBHOOKS_ALLOW_HTTP", "1"],
  ["WEBHOOKS_ALLOW_PRIVATE", "True"],
  ["WEBHOOK_TIMEOUT_MS", "99"],
  ["WEBHOOK_TIMEOUT_MS", "120001"],
  ["WEBHOOK_TIMEOUT_MS", "15s"],
  ["WEBHOOK_RETRY_SCHEDULE_MS", "5000,,300000"],
  ["WEBHOOK_RETRY_SCHEDULE_MS", "-1"],
  ["WEBHOOK_RETRY_SCHEDULE_MS", "1.5"],
  ["WEBHOOK_RETRY_SCHEDULE_MS", "86400001"],
  ["WEBHOOK_RETRY_SCHEDULE_MS", Array(21).fill("1").join(",")],
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
