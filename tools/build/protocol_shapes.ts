/**
 * Writes `protocol/shapes.ts` and `protocol/webhook_shapes.ts`: the shapes
 * of the requests and answers the wire protocol's types name, as TypeScript, converted from the OpenAPI
 * document's `components.schemas` — themselves converted from the valibot
 * schemas that validate requests and describe answers
 * (`src/http/openapi/components.ts`). So the shapes are stated once, in
 * valibot, and the published types are plain declarations (no inferred
 * types in a package's public API). `deno task shapes` runs it;
 * `tests/unit/protocol_shapes_test.ts` fails when a committed file is not
 * what this writes, and checks the shapes against valibot's own inference.
 *
 * It converts the JSON Schema that the document uses: `$ref`, `anyOf`,
 * `const`, `enum`, `type` (string, integer, number, boolean, null, array,
 * object), `properties` with `required`, and `additionalProperties`. Other
 * keywords constrain values, not types, and are left to the service.
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { componentSchemas } from "../../src/http/openapi/components.ts";
import { webhookComponentSchemas } from "../../src/http/openapi/webhook_components.ts";

/** The project root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The generated module, relative to the root: the client's requests and answers. */
export const OUTPUT = "protocol/shapes.ts";
/** The generated module of the webhook administration's shapes, which `OUTPUT` re-exports. */
export const WEBHOOK_OUTPUT = "protocol/webhook_shapes.ts";

/**
 * The components the protocol's types start from; the components they refer
 * to are written too. Requests a client makes and answers it reads.
 */
export const ROOTS: readonly string[] = [
  "VariantA",
  "VariantB",
  "ApprovalBody",
  "IntentRecord",
  "IntentPage",
  "ApprovalView",
  "Event",
  "EventPage",
  "DocumentId",
  "DryRun",
  "Config",
  "Health",
];

/** The roots of {@link WEBHOOK_OUTPUT}: the webhook administration's requests and answers. */
export const WEBHOOK_ROOTS: readonly string[] = [
  "Webhook",
  "WebhookCreated",
  "WebhookList",
  "WebhookSecret",
  "WebhookAttempt",
  "WebhookAttemptList",
];

/** One generated module: where, from which roots, what it says of itself, what it re-exports. */
interface ShapesModule {
  output: string;
  roots: readonly string[];
  summary: string[];
  reexports: string[];
}

/** The modules written, each a closure of its roots (no component is in two). */
export const MODULES: readonly ShapesModule[] = [
  {
    output: OUTPUT,
    roots: ROOTS,
    summary: [
      "The shapes of the requests a client makes and the answers it reads, as the",
      "OpenAPI document states them (docs/interface.md), one declaration per",
      "component of the document, under the component's name. `types.ts` gives",
      "them the names the client library uses; the webhook administration's are",
      "in `webhook_shapes.ts`, re-exported here.",
    ],
    reexports: ["./webhook_shapes.ts"],
  },
  {
    output: WEBHOOK_OUTPUT,
    roots: WEBHOOK_ROOTS,
    summary: [
      "The shapes of the webhook administration's requests and answers, as the",
      "OpenAPI document states them (docs/interface.md §11), one declaration per",
      "component of the document, under the component's name.",
    ],
    reexports: [],
  },
];

/** The JSON Schema keywords read here. */
interface JsonSchema {
  $ref?: string;
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  type?: string;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
}

const REF_PREFIX = "#/components/schemas/";
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function refName(ref: string): string {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`cannot follow ${ref}`);
  return ref.slice(REF_PREFIX.length);
}

const LINE_WIDTH = 100;

/** A JSDoc comment of `text`, indented by `indent`, wrapped at the line width; "" for no text. */
function doc(text: string | undefined, indent: string): string {
  if (!text) return "";
  const safe = text.replaceAll("*/", "*\\/");
  if (indent.length + safe.length + 7 <= LINE_WIDTH) return `${indent}/** ${safe} */\n`;
  const lines: string[] = [];
  let line = "";
  for (const word of safe.split(" ")) {
    if (line !== "" && indent.length + 3 + line.length + 1 + word.length > LINE_WIDTH) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}\n`).join("")}${indent} */\n`;
}

/** Wraps a union in parentheses where it would otherwise bind wrongly (`(A | B)[]`). */
function grouped(type: string, schema: JsonSchema): string {
  return schema.anyOf || (schema.enum?.length ?? 0) > 1 ? `(${type})` : type;
}

/** The components by name, for the descriptions of members that only refer to one. */
let components: Record<string, JsonSchema> = {};

/**
 * The description of a member that has none of its own: that of the
 * component it is (`$ref`), or is a list of, or is unless null.
 */
function describedBy(schema: JsonSchema): string | undefined {
  const named = schema.$ref ??
    schema.items?.$ref ??
    schema.anyOf?.find((member) => member.$ref)?.$ref;
  if (named === undefined) return undefined;
  const description = components[refName(named)]?.description;
  if (description === undefined) return undefined;
  if (schema.items) return `A list, each: ${description}`;
  if (schema.anyOf) return `${description} Or null.`;
  return description;
}

/** The TypeScript type of a schema, nested at `indent`. */
function typeOf(schema: JsonSchema, indent: string, refs: Set<string>): string {
  if (schema.$ref) {
    const name = refName(schema.$ref);
    refs.add(name);
    return name;
  }
  if (schema.anyOf) return schema.anyOf.map((s) => typeOf(s, indent, refs)).join(" | ");
  if ("const" in schema) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (!schema.items) return "unknown[]";
      return `${grouped(typeOf(schema.items, indent, refs), schema.items)}[]`;
    case "object":
      return objectType(schema, indent, refs);
    case undefined:
      return "unknown";
    default:
      throw new Error(`cannot convert type ${schema.type}`);
  }
}

/** An object literal type: its properties, optional unless required, and any further members. */
function objectType(schema: JsonSchema, indent: string, refs: Set<string>): string {
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  let body = "";
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name);
    const optional = required.has(name) ? "" : "?";
    body += doc(property.description ?? describedBy(property), inner);
    body += `${inner}${key}${optional}: ${typeOf(property, inner, refs)};\n`;
  }
  const more = schema.additionalProperties;
  if (more !== undefined && more !== false) {
    const value = more === true ? "unknown" : typeOf(more, inner, refs);
    body += `${inner}[key: string]: ${value};\n`;
  }
  return body === "" ? "Record<string, never>" : `{\n${body}${indent}}`;
}

/** The declaration of one component: an interface for an object, else a type alias. */
function declaration(name: string, schema: JsonSchema, refs: Set<string>): string {
  const type = typeOf(schema, "", refs);
  const head = doc(schema.description, "");
  return schema.type === "object" && type.startsWith("{\n")
    ? `${head}export interface ${name} ${type}\n`
    : `${head}export type ${name} = ${type};\n`;
}

/** A module's text, before formatting: every root and what it refers to, in name order. */
export function shapesSource(module: ShapesModule): string {
  // A pattern is no type: the setting it follows changes nothing here.
  components = {
    ...componentSchemas(),
    ...webhookComponentSchemas({ allowHttp: false }),
  } as Record<string, JsonSchema>;
  const written = new Map<string, string>();
  const pending = [...module.roots];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (written.has(name)) continue;
    const schema = components[name];
    if (!schema) throw new Error(`no component ${name}`);
    const refs = new Set<string>();
    written.set(name, declaration(name, schema, refs));
    for (const ref of refs) if (!written.has(ref)) pending.push(ref);
  }
  const names = [...written.keys()].sort();
  return [
    `// Generated by \`deno task shapes\` (tools/build/protocol_shapes.ts) from the OpenAPI`,
    "// document's components. Do not edit: change the valibot schemas, then run it.",
    "",
    "/**",
    ...module.summary.map((line) => ` * ${line}`),
    " * @module",
    " */",
    "",
    ...module.reexports.map((path) => `export type * from "${path}";\n`),
    ...names.map((name) => written.get(name)!),
  ].join("\n");
}

/** A module's text as `deno fmt` writes it, with the project's settings. */
export async function shapesModule(module: ShapesModule): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "ts", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).spawn();
  const writer = output.stdin.getWriter();
  await writer.write(new TextEncoder().encode(shapesSource(module)));
  await writer.close();
  const { success, stdout, stderr } = await output.output();
  if (!success) throw new Error(`deno fmt failed: ${new TextDecoder().decode(stderr)}`);
  return new TextDecoder().decode(stdout);
}

if (import.meta.main) {
  for (const module of MODULES) {
    await Deno.writeTextFile(join(ROOT, module.output), await shapesModule(module));
    console.log(`${module.output} written`);
  }
}
