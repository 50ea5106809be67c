/**
 * The published OpenAPI document under an outside linter: redocly's
 * recommended rules (the CLI version pinned in tests/deno.json) find no error in
 * it; among them, that every operation says what secures it, the webhook
 * delivery included (`security: []`: its signature does).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { routes } from "../../src/http/router.ts";
import { buildOpenApiDocument } from "../../src/http/openapi/document.ts";
import { projectRoot } from "../../testing/spawn_server.ts";

interface LintReport {
  totals: { errors: number; warnings: number };
  version: string;
  problems: { ruleId: string; severity: string; message: string }[];
}

Deno.test("redocly's recommended rules find no error in the published document", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(projectRoot, "tests", "deno.json")));
  const cli: string = config.imports["@redocly/cli"];
  assert.match(cli, /^npm:@redocly\/cli@\d+\.\d+\.\d+$/, "a pinned version");
  const dir = await Deno.makeTempDir({ prefix: "openapi-lint-" });
  try {
    const file = join(dir, "openapi.json");
    await Deno.writeTextFile(
      file,
      JSON.stringify(buildOpenApiDocument(routes(), { webhooksAllowHttp: false })),
    );
    const output = await new Deno.Command(Deno.execPath(), {
      // From the checkout: the lock file holds the CLI's integrity.
      args: ["run", "-A", "--quiet", cli, "lint", "--format", "json", file],
      cwd: projectRoot,
      env: { NO_COLOR: "1", REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    const report = JSON.parse(text.slice(text.indexOf("{"))) as LintReport;
    assert.equal(`npm:@redocly/cli@${report.version}`, cli);
    const errors = report.problems.filter((p) => p.severity === "error");
    assert.deepEqual(errors.map((p) => `${p.ruleId}: ${p.message}`), []);
    assert.equal(report.totals.errors, 0);
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    assert.ok(!report.problems.some((p) => p.ruleId === "security-defined"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
