/**
 * Runs a valibot schema and turns its first issue into a refusal that names the
 * field path without echoing the input.
 * @module
 */

import * as v from "valibot";
import { type ErrorCode, ServiceError } from "../errors.ts";

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

/** Options of {@link validate}. */
export interface ValidateOptions {
  /** The code of a refusal; `invalid_body` unless given. */
  code?: ErrorCode;
  /**
   * Codes other than `invalid_body` for the issues of some actions, by action
   * type (`{ extractor_url: "invalid_evidence_extractor_url" }`). A shape
   * problem (`invalid_body`) is reported first when a value has both.
   */
  codes?: Readonly<Record<string, ErrorCode>>;
}

/**
 * Validates `value` against `schema`.
 *
 * @param path where `value` sits in the request body, e.g. `"payload"`.
 * @returns `value` itself (not valibot's copy) typed by the schema, so the
 *   value that is verified is the value that is stored.
 * @throws {ServiceError} `options.code` (`invalid_body` unless given), or
 *   the code `options.codes` gives, naming the first bad field.
 */
export function validate<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  path: string,
  options: ValidateOptions = {},
): v.InferOutput<S> {
  const codes = options.codes;
  // Issues come in the order they are found; all are needed only to put shape problems first.
  const result = v.safeParse(schema, value, { abortEarly: codes === undefined });
  if (result.success) return value as v.InferOutput<S>;
  const issue = result.issues.find((item) => codes?.[item.type] === undefined) ??
    result.issues[0];
  const keys = (issue.path ?? []).map((item) => (item as { key: unknown }).key);
  const where = fieldPath(path, ...(keys as (string | number)[])) || "body";
  throw new ServiceError(
    codes?.[issue.type] ?? options.code ?? "invalid_body",
    `${where}: ${describe(issue)}`,
  );
}
