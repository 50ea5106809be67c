/** Unit tests of `readLimitSettings`: defaults, every variable read, one refusal per malformed value. */

import assert from "node:assert/strict";
import { formatIpAddress } from "../../src/ip_address.ts";
import { readLimitSettings } from "../../src/limits_settings.ts";
import { SettingsError } from "../../src/errors.ts";

Deno.test("readLimitSettings applies the documented defaults", () => {
  assert.deepEqual(readLimitSettings({}), {
    ratePerAddress: 50,
    ratePerSigner: 10,
    authFailuresPerMinute: 20,
    trustedProxies: [],
    maxPendingPerSigner: 100,
  });
  // Empty counts as unset, as for every other setting.
  assert.deepEqual(
    readLimitSettings({
      RATE_LIMIT_PER_ADDRESS: "",
      RATE_LIMIT_PER_SIGNER: "",
      RATE_LIMIT_AUTH_FAILURES: "",
      TRUSTED_PROXIES: "",
      MAX_PENDING_PER_SIGNER: "",
    }),
    readLimitSettings({}),
  );
});

Deno.test("readLimitSettings reads every variable", () => {
  const s = readLimitSettings({
    RATE_LIMIT_PER_ADDRESS: "200",
    RATE_LIMIT_PER_SIGNER: "3",
    RATE_LIMIT_AUTH_FAILURES: "7",
    TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.7 ,2001:db8::/32,\t::1",
    MAX_PENDING_PER_SIGNER: "5",
  });
  assert.equal(s.ratePerAddress, 200);
  assert.equal(s.ratePerSigner, 3);
  assert.equal(s.authFailuresPerMinute, 7);
  assert.equal(s.maxPendingPerSigner, 5);
  assert.deepEqual(
    s.trustedProxies.map((c) => `${formatIpAddress(c.network)}/${c.prefix}`),
    ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "::1/128"],
  );
});

Deno.test("readLimitSettings turns a rate limit off with 0", () => {
  const s = readLimitSettings({
    RATE_LIMIT_PER_ADDRESS: "0",
    RATE_LIMIT_PER_SIGNER: "0",
    RATE_LIMIT_AUTH_FAILURES: "0",
  });
  assert.equal(s.ratePerAddress, 0);
  assert.equal(s.ratePerSigner, 0);
  assert.equal(s.authFailuresPerMinute, 0);
});

Deno.test("readLimitSettings refuses malformed values with one line naming the variable", () => {
  const table: [string, string][] = [
    ["RATE_LIMIT_PER_ADDRESS", "-1"],
    ["RATE_LIMIT_PER_ADDRESS", "1.5"],
    ["RATE_LIMIT_PER_ADDRESS", "1e3"],
    ["RATE_LIMIT_PER_ADDRESS", "fifty"],
    ["RATE_LIMIT_PER_ADDRESS", " 50"],
    ["RATE_LIMIT_PER_ADDRESS", "1000001"],
    ["RATE_LIMIT_PER_ADDRESS", "99999999999999999999"],
    ["RATE_LIMIT_PER_SIGNER", "0x10"],
    ["RATE_LIMIT_PER_SIGNER", "+10"],
    ["RATE_LIMIT_AUTH_FAILURES", "-1"],
    ["RATE_LIMIT_AUTH_FAILURES", "twenty"],
    ["RATE_LIMIT_AUTH_FAILURES", "1000001"],
    ["MAX_PENDING_PER_SIGNER", "0"],
    ["MAX_PENDING_PER_SIGNER", "many"],
    ["TRUSTED_PROXIES", "10.0.0.0/8,"],
    ["TRUSTED_PROXIES", ",10.0.0.1"],
    ["TRUSTED_PROXIES", "10.0.0.1,,10.0.0.2"],
    ["TRUSTED_PROXIES", "10.0.0.1/8"],
    ["TRUSTED_PROXIES", "10.0.0.0/33"],
    ["TRUSTED_PROXIES", "fe80::1%eth0"],
    ["TRUSTED_PROXIES", "10.1"],
    ["TRUSTED_PROXIES", "proxy.internal"],
    ["TRUSTED_PROXIES", "10.0.0.1 10.0.0.2"],
    ["TRUSTED_PROXIES", "10.0.0.1;10.0.0.2"],
    ["TRUSTED_PROXIES", "10.0.0.1\n10.0.0.2"],
    ["TRUSTED_PROXIES", `${"9".repeat(500)}`],
  ];
  for (const [name, value] of table) {
    assert.throws(
      () => readLimitSettings({ [name]: value }),
      (error: unknown) => {
        assert.ok(error instanceof SettingsError, `${name}=${JSON.stringify(value)}`);
        assert.ok(error.message.startsWith(`${name} `), error.message);
        assert.ok(!/[\r\n]/.test(error.message), error.message);
        assert.ok(error.message.length < 200, error.message);
        return true;
      },
    );
  }
});

Deno.test("readLimitSettings says which TRUSTED_PROXIES entry is wrong and why", () => {
  assert.throws(
    () => readLimitSettings({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1/24" }),
    {
      name: "SettingsError",
      message:
        'TRUSTED_PROXIES must list IP addresses or CIDR ranges: "192.0.2.1/24": bits are set past the /24 prefix',
    },
  );
  assert.throws(() => readLimitSettings({ RATE_LIMIT_PER_SIGNER: "-3" }), {
    message: "RATE_LIMIT_PER_SIGNER must be a whole number from 0 to 1000000",
  });
  assert.throws(() => readLimitSettings({ MAX_PENDING_PER_SIGNER: "0" }), {
    message: "MAX_PENDING_PER_SIGNER must be a whole number from 1 to 1000000",
  });
});
