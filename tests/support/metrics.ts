/**
 * Reading `GET /metrics`: the Prometheus text exposition format, parsed
 * strictly.
 * @module
 */

import assert from "node:assert/strict";
import type { Harness } from "./harness.ts";

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE =
  /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;

/**
 * Parses the text exposition format strictly: every line is a HELP or TYPE
 * comment or a sample, and every sample belongs to a declared metric.
 */
export function parseExposition(text: string): Sample[] {
  assert.ok(text.endsWith("\n"), "the exposition ends with a newline");
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (comment) {
      if (comment[1] === "TYPE") {
        assert.ok(["counter", "histogram", "gauge"].includes(comment[3]), line);
        types.set(comment[2], comment[3]);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    assert.ok(match, `not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText = "", valueText] = match;
    const value = valueText === "+Inf" ? Infinity : Number(valueText);
    assert.ok(!Number.isNaN(value), line);
    const base = name.replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(name) || types.get(base) === "histogram", `undeclared metric ${name}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of labelText.matchAll(LABEL)) labels[key] = raw;
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The value of the first sample of `name` with `labels` (others may be there too); 0 when none. */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string>,
): number {
  const found = samples.find((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  return found?.value ?? 0;
}

/** `GET /metrics` with `token`, parsed. */
export async function scrape(h: Harness, token = h.adminToken): Promise<Sample[]> {
  const response = await h.fetch("/metrics", { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await response.text());
}
