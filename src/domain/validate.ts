/**
 * Runs a valibot schema and turns its first issue into a 400 that names the
 * field path without echoing the input.
 * @module
 */

import * as v from "valibot";
import { badRequest, type ErrorCode } from "../errors.ts";

/** Renders a path segment; member names are input, so they are quoted and bounded. */
function segment(key: unknown): string {
  if (typeof key === "number") return `[${key}]`;
  const name = String(key);
  if (/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return `.${name}`;
  const shown = name.length > 32 ? `${name.slice(0, 32)}…` : name;
  return `[${JSON.stringify(shown)}]`;
}

/**
 * Joins a base path with more segments: `fieldPath("signature", "Ed25519", "pub_key")`.
 */
export function fieldPath(base: string, ...more: (string | number)[]): string {
  let out = base;
  for (const key of more) out += segment(key);
  return out.startsWith(".") ? out.slice(1) : out;
}

function describe(issue: v.BaseIssue<unknown>): string {
  // Our schemas carry their own messages; valibot's defaults echo the input, so they are replaced.
  if (issue.type === "strict_object" && issue.expected === "never") return "unknown member";
  if (issue.expected?.startsWith('"') && issue.received === "undefined") return "is required";
  if (issue.message.startsWith("Invalid ")) return `expected ${issue.expected ?? "another value"}`;
  return issue.message;
}

/**
 * Validates `value` against `schema`.
 *
 * @param path where `value` sits in the request body, e.g. `"payload"`.
 * @param code the error code of a refusal; `invalid_body` unless given.
 * @returns `value` itself (not valibot's copy) typed by the schema, so the
 *   value that is verified is the value that is stored.
 * @throws {ServiceError} 400 with `code`, naming the first bad field.
 */
export function validate<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  path: string,
  code: ErrorCode = "invalid_body",
): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (result.success) return value as v.InferOutput<S>;
  const issue = result.issues[0];
  const keys = (issue.path ?? []).map((item) => (item as { key: unknown }).key);
  const where = fieldPath(path, ...(keys as (string | number)[])) || "body";
  throw badRequest(code, `${where}: ${describe(issue)}`);
}
