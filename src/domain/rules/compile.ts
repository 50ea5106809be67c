/**
 * Compiling a governed document's rules (docs/interface.md §15) when the
 * document is checked: each `when` parsed and bounded once, its `matches`
 * patterns compiled once (RE2: linear in its input), each effect checked
 * against the document's signers. The compiled rules are part of the quorum,
 * which the document cache keeps with the document.
 * @module
 */

import { celEnv, celFunc, CelScalar, listType, objectType, parse, plan } from "@bufbuild/cel";
import { RE2JS } from "@bufbuild/re2";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { ServiceError } from "../../errors.ts";
import type { Signers } from "../intent.ts";
import { decodePublicKey, type PublicKeyCache } from "../public_keys.ts";
import { MAX_RULE_REASON_CHARS, type RuleSchema } from "../schemas.ts";
import type * as v from "valibot";
import { checkBounds, RuleBoundError } from "./bounds.ts";
import type { CompiledRule, RuleBindings, RuleEffect } from "./rule.ts";

/** The variables of a rule (docs/interface.md §15) as the evaluator declares them. */
const VARIABLES = {
  intent: CelScalar.DYN,
  variant: CelScalar.STRING,
  document: CelScalar.STRING,
  signers: listType(CelScalar.STRING),
  kinds: listType(CelScalar.STRING),
  now: objectType(TimestampSchema),
};

/** The environment of one document's rules: its literal patterns, compiled once. */
function environment(patterns: ReadonlyMap<string, RE2JS>) {
  const re2 = {
    compile(pattern: string) {
      const compiled = patterns.get(pattern);
      // Only literal patterns pass the bounds, and each was compiled when the rule was.
      if (compiled === undefined) throw new Error("a pattern that was not compiled");
      return compiled;
    },
  };
  return celEnv({
    variables: VARIABLES,
    re2,
    // cel-spec's global form `matches(s, p)` beside the method (which the package defines alone).
    funcs: [
      celFunc(
        "matches",
        [CelScalar.STRING, CelScalar.STRING],
        CelScalar.BOOL,
        (text: string, pattern: string) => re2.compile(pattern).test(text),
      ),
    ],
  });
}

/** The standard definitions, against which every expression is bounded. */
const STANDARD = environment(new Map());

/** The line and column (1-based) of an offset into `text`. */
function place(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** A reason as a message may carry it: one line, at most the reason bound. */
function bounded(reason: string): string {
  const line = reason.replace(/\s+/g, " ").trim();
  return line.length > MAX_RULE_REASON_CHARS
    ? `${line.slice(0, MAX_RULE_REASON_CHARS - 1)}…`
    : line;
}

function invalidRule(path: string, reason: string): ServiceError {
  return new ServiceError("invalid_rule", `${path}: ${bounded(reason)}`);
}

/** What the parser's error says of the input, and where. */
function parseFailure(error: unknown): { reason: string; offset: number } {
  if (error instanceof RangeError) return { reason: "nested too deeply", offset: 0 };
  const e = error as { rawMessage?: unknown; message?: unknown; location?: unknown };
  const location = e.location as { start?: { offset?: number } } | undefined;
  const reason = typeof e.rawMessage === "string"
    ? e.rawMessage
    : typeof e.message === "string"
    ? e.message.replace(/^<input>:\d+:\d+: /, "")
    : "does not parse";
  return { reason, offset: location?.start?.offset ?? 0 };
}

/** A rule's `when` parsed and bounded: the tree, and the patterns it matches against. */
function readWhen(text: string, path: string) {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(text);
  } catch (error) {
    const { reason, offset } = parseFailure(error);
    throw invalidRule(path, `at ${place(text, offset)}: ${reason}`);
  }
  try {
    return { parsed, patterns: checkBounds(STANDARD, parsed) };
  } catch (error) {
    if (error instanceof RuleBoundError) {
      throw invalidRule(path, `at ${place(text, error.offset)}: ${error.message}`);
    }
    if (error instanceof RangeError) throw invalidRule(path, "at 1:1: nested too deeply");
    throw error;
  }
}

/** The key ids a `signers` effect names, each one of the document's signers. */
function ruleSigners(
  keys: readonly string[],
  path: string,
  ctx: { signers: Signers; keys?: PublicKeyCache },
): ReadonlySet<string> {
  const ids = new Set<string>();
  keys.forEach((text, i) => {
    const keyPath = `${path}[${i}]`;
    let id: string;
    try {
      id = decodePublicKey(text, keyPath, "any", ctx.keys).id;
    } catch (error) {
      if (error instanceof ServiceError) throw new ServiceError("invalid_rule", error.message);
      throw error;
    }
    if (!ctx.signers.has(id)) throw invalidRule(keyPath, "is not a signer of the document");
    if (ids.has(id)) throw invalidRule(keyPath, "names the same key as another entry");
    ids.add(id);
  });
  return ids;
}

/** Options of {@link compileRules}. */
export interface CompileOptions {
  /** Where the rules sit in the document, for messages: `authorization.rules`. */
  path: string;
  /** The document's signers. */
  signers: Signers;
  /** The sum of their weights. */
  totalWeight: bigint;
  /** Where decoded public keys are kept. */
  keys?: PublicKeyCache;
}

/**
 * Compiles the rules of a governed document, already shaped by `RuleSchema`.
 *
 * @throws {ServiceError} `invalid_rule` naming the first rule at fault: its
 *   path, and for CEL the line and column and the reason.
 */
export function compileRules(
  rules: readonly v.InferOutput<typeof RuleSchema>[],
  options: CompileOptions,
): CompiledRule[] {
  const read = rules.map((rule, index) => {
    const path = `${options.path}[${index}]`;
    return { rule, index, path, ...readWhen(rule.when, `${path}.when`) };
  });
  const patterns = new Map<string, RE2JS>();
  for (const { path, patterns: found } of read) {
    for (const pattern of found) {
      if (patterns.has(pattern)) continue;
      try {
        patterns.set(pattern, RE2JS.compile(pattern));
      } catch (error) {
        const reason = error instanceof Error ? error.message : "does not compile";
        throw invalidRule(`${path}.when`, `a matches pattern: ${reason}`);
      }
    }
  }
  const env = environment(patterns);
  return read.map(({ rule, index, path, parsed }) => {
    let effect: RuleEffect;
    if (rule.deny !== undefined) effect = { deny: rule.deny };
    else if (rule.threshold !== undefined) {
      if (BigInt(rule.threshold) > options.totalWeight) {
        throw invalidRule(
          `${path}.threshold`,
          `must be at most the sum of the weights, ${options.totalWeight}`,
        );
      }
      effect = { threshold: rule.threshold };
    } else if (rule.signers !== undefined) {
      effect = { signers: ruleSigners(rule.signers, `${path}.signers`, options) };
    } else effect = { kinds: rule.kinds! };
    const evaluate = plan(env, parsed) as (bindings: RuleBindings) => unknown;
    return { index, when: evaluate, effect };
  });
}
