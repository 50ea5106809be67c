/**
 * Ajv (JSON Schema 2020-12) holding the service's OpenAPI document, so that
 * requests and answers are checked against what it publishes.
 * @module
 */

import { Ajv2020 } from "ajv/dist/2020.js";

/** The `$id` the document is held under: its schemas are `${DOC_ID}#<pointer>`. */
export const DOC_ID = "https://intents.test/openapi.json";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ajv, strict about unknown keywords, holding `doc` under {@link DOC_ID}. The
 * document is not itself a schema: its top-level members are known keywords
 * and only the subschemas under it are compiled.
 */
export function ajvFor(doc: Record<string, unknown>): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat("uuid", UUID);
  ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)) && s.includes("T"));
  for (const keyword of Object.keys(doc)) ajv.addKeyword({ keyword });
  ajv.addSchema({ ...doc, $id: DOC_ID });
  return ajv;
}
