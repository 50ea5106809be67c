/**
 * The store-time checks of a rule's parsed CEL expression
 * (docs/interface.md §15) that bound what it may do: only the rule variables
 * and cel-spec's standard definitions, at most {@link MAX_NODES} nodes,
 * no comprehension in the step of another, `matches` only with a literal
 * pattern, and a result that is a boolean or dynamic. `@bufbuild/cel` does
 * not export its type checker (docs/decisions.md), so the result's type is
 * read from the standard definitions' declared results; a mismatch deeper in
 * the expression is a `rule_error` when evaluated.
 * @module
 */

import type { CelEnv, parse } from "@bufbuild/cel";

/** A parsed expression as `@bufbuild/cel` gives it. */
export type Parsed = ReturnType<typeof parse>;
type Expr = Parsed["expr"];
type SourceInfo = NonNullable<Parsed["sourceInfo"]>;

/** Most nodes of a rule's expression, its macros expanded. */
export const MAX_NODES = 200;

/** The type of each rule variable, by its CEL type name. */
export const VARIABLE_TYPES: Readonly<Record<string, string>> = {
  intent: "map",
  variant: "string",
  document: "string",
  signers: "list",
  kinds: "list",
  now: "google.protobuf.Timestamp",
};

/** Type names that stand as values (`type(x) == string`). */
const TYPE_NAMES = new Set([
  "int",
  "uint",
  "double",
  "bool",
  "string",
  "bytes",
  "list",
  "map",
  "null_type",
  "type",
]);

/** Operators the evaluator knows without a declared overload, and their results. */
const OPERATORS: Readonly<Record<string, string | null>> = {
  "_&&_": "bool",
  "_||_": "bool",
  "@not_strictly_false": "bool",
  "_[_]": "dyn",
  // The result of a conditional is that of its branches.
  "_?_:_": null,
};

/** A refusal of the expression: what, and where (an offset into its text). */
export class RuleBoundError extends Error {
  override name = "RuleBoundError";
  constructor(message: string, readonly offset: number) {
    super(message);
  }
}

/** What the walk keeps: the environment, the source offsets, and the patterns met. */
interface Walk {
  env: CelEnv;
  info: SourceInfo | undefined;
  nodes: number;
  patterns: Set<string>;
}

function offsetOf(walk: Walk, expr: Expr): number {
  return walk.info?.positions[String(expr.id)] ?? 0;
}

function refuse(walk: Walk, expr: Expr, message: string): never {
  throw new RuleBoundError(message, offsetOf(walk, expr));
}

/** Possible result types of an expression; "dyn" when only evaluation can tell. */
type Types = Set<string>;

const CONSTANT_TYPES: Readonly<Record<string, string>> = {
  boolValue: "bool",
  int64Value: "int",
  uint64Value: "uint",
  doubleValue: "double",
  stringValue: "string",
  bytesValue: "bytes",
  nullValue: "null_type",
};

function callTypes(walk: Walk, expr: Expr, scope: Map<string, Types>, inLoop: boolean): Types {
  const call = expr.exprKind.value as Extract<Expr["exprKind"], { case: "callExpr" }>["value"];
  if (call.target) visit(walk, call.target, scope, inLoop);
  const args = call.args.map((arg) => visit(walk, arg, scope, inLoop));
  if (call.function in OPERATORS) {
    const result = OPERATORS[call.function];
    return result === null ? new Set([...args[1], ...args[2]]) : new Set([result]);
  }
  if (call.function === "matches") {
    // `s.matches(p)` or the global `matches(s, p)`: the pattern is the last argument either way.
    const pattern = call.args[call.target ? 0 : 1]?.exprKind;
    if (pattern?.case !== "constExpr" || pattern.value.constantKind.case !== "stringValue") {
      refuse(walk, expr, "matches takes a literal pattern only");
    }
    walk.patterns.add(pattern.value.constantKind.value);
  }
  const group = walk.env.funcs.find(call.function);
  const results = new Set<string>();
  for (const overload of group ?? []) {
    const fits = (overload.target !== undefined) === (call.target !== undefined) &&
      overload.arguments.length === call.args.length;
    if (fits) results.add(overload.result.name);
  }
  if (results.size === 0) {
    const shown = call.function.length > 40 ? `${call.function.slice(0, 40)}…` : call.function;
    refuse(walk, expr, `${shown} is not a standard function with ${call.args.length} arguments`);
  }
  return results;
}

/** Checks `expr` and what it holds; returns its possible result types. */
function visit(walk: Walk, expr: Expr, scope: Map<string, Types>, inLoop: boolean): Types {
  if (++walk.nodes > MAX_NODES) refuse(walk, expr, `more than ${MAX_NODES} nodes`);
  const kind = expr.exprKind;
  switch (kind.case) {
    case "constExpr":
      return new Set([CONSTANT_TYPES[kind.value.constantKind.case ?? ""] ?? "dyn"]);
    case "identExpr": {
      const found = scope.get(kind.value.name);
      if (found) return found;
      if (TYPE_NAMES.has(kind.value.name)) return new Set(["type"]);
      const shown = kind.value.name.length > 40
        ? `${kind.value.name.slice(0, 40)}…`
        : kind.value.name;
      return refuse(walk, expr, `unknown variable ${shown}`);
    }
    case "selectExpr":
      visit(walk, kind.value.operand!, scope, inLoop);
      return new Set([kind.value.testOnly ? "bool" : "dyn"]);
    case "callExpr":
      return callTypes(walk, expr, scope, inLoop);
    case "listExpr":
      for (const element of kind.value.elements) visit(walk, element, scope, inLoop);
      return new Set(["list"]);
    case "structExpr":
      if (kind.value.messageName !== "") refuse(walk, expr, "messages cannot be built");
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === "mapKey") visit(walk, entry.keyKind.value, scope, inLoop);
        visit(walk, entry.value!, scope, inLoop);
      }
      return new Set(["map"]);
    case "comprehensionExpr": {
      if (inLoop) refuse(walk, expr, "a comprehension cannot be inside another");
      const c = kind.value;
      // The range, the start and the result are evaluated once: a comprehension there runs
      // before or after this one (a chain), not inside it. Its step runs for every element.
      visit(walk, c.iterRange!, scope, false);
      const inner = new Map(scope);
      inner.set(c.accuVar, visit(walk, c.accuInit!, scope, false));
      inner.set(c.iterVar, new Set(["dyn"]));
      if (c.iterVar2 !== "") inner.set(c.iterVar2, new Set(["dyn"]));
      visit(walk, c.loopCondition!, inner, true);
      visit(walk, c.loopStep!, inner, true);
      return visit(walk, c.result!, inner, false);
    }
    default:
      return refuse(walk, expr, "an expression of an unknown kind");
  }
}

/**
 * Checks a parsed rule expression against the bounds.
 *
 * @returns the literal patterns of its `matches` calls, to compile once.
 * @throws {RuleBoundError} the first bound it breaks, with its offset.
 */
export function checkBounds(env: CelEnv, parsed: Parsed): Set<string> {
  const walk: Walk = { env, info: parsed.sourceInfo, nodes: 0, patterns: new Set() };
  const scope = new Map(
    Object.entries(VARIABLE_TYPES).map(([name, type]) => [name, new Set([type])]),
  );
  const types = visit(walk, parsed.expr, scope, false);
  if (!types.has("bool") && !types.has("dyn")) {
    refuse(walk, parsed.expr, `yields ${[...types].join(" or ")}, not a boolean`);
  }
  return walk.patterns;
}
