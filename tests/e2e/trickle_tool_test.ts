/**
 * The trickle tool runs end to end at a small size: it spawns the real
 * server, trickles answers a byte per segment, and reports the server's CPU
 * for each. The service stops reading long before the head's end (256 reads
 * at most); the CPU figure itself is not asserted (it depends on the
 * machine: docs/performance.md has it).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { projectRoot } from "../../testing/spawn_server.ts";

Deno.test("trickle reports the server's CPU for answers it stopped reading within its limits", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      join(projectRoot, "tools/trickle/trickle.ts"),
      "--answers",
      "2",
      "--json",
    ],
    cwd: projectRoot,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const err = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, err);
  const figures = JSON.parse(new TextDecoder().decode(output.stdout));
  assert.equal(figures.answers, 2);
  assert.equal(figures.head_bytes, 64 * 1024);
  assert.ok(figures.cpu_ms_per_answer >= 0);
  assert.ok(
    figures.bytes_taken_per_answer < figures.head_bytes / 2,
    `${figures.bytes_taken_per_answer} bytes written before the server closed`,
  );
});
