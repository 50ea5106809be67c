/**
 * The OpenAPI 3.1 document of the service, served at `GET /openapi.json`,
 * built from its routes: each declares its operation, and its access and cost
 * give the operation's `security`, its refusals of a token and its rate limits.
 * @module
 */

import type { Settings } from "../../settings.ts";
import { ACCESS, type Route } from "../route.ts";
import { componentSchemas } from "./components.ts";
import { openApiExamples } from "./examples.ts";
import { type Obj, rateLimited, TOKEN_REFUSALS } from "./responses.ts";
import { webhookComponentSchemas, webhookDeliveries } from "./webhook_components.ts";

/** The settings the document follows: `WEBHOOKS_ALLOW_HTTP` (the webhook URL's scheme). */
export type DocumentSettings = Pick<Settings, "webhooksAllowHttp">;

/** An operation as its route declares it: its `security` (after its tags), refusals and limits. */
function asDeclared(operation: Obj, route: Route): Obj {
  const out: Obj = {};
  // A route some requests may make without a token also takes none (`{}`), for an address token.
  const security = route.publicWhen
    ? [...ACCESS[route.access].security, {}]
    : ACCESS[route.access].security;
  for (const [key, value] of Object.entries(operation)) {
    out[key] = value;
    if (key === "tags") out.security = security;
  }
  out.security ??= security;
  if (route.access !== "public") {
    out.responses = { ...(operation.responses as Obj), ...TOKEN_REFUSALS };
  }
  const cost = route.publicWhen ? "one" : route.cost ?? "none";
  return cost === "none" ? out : rateLimited(out);
}

/** A security scheme of a bearer token. */
function bearer(description: string): Obj {
  return { type: "http", scheme: "bearer", description };
}

/**
 * Builds the OpenAPI 3.1 document.
 *
 * @param served the routes, each described by its operation; paths, methods and tags
 *   in their order.
 * @param settings the settings of the process that serves it.
 * @returns the document as a plain JSON value.
 */
export function buildOpenApiDocument(
  served: readonly Route[],
  settings: DocumentSettings,
): Obj {
  const examples = openApiExamples();
  const paths: Record<string, Obj> = {};
  const tags = new Set<string>();
  for (const route of served) {
    const operation = route.operation(examples);
    for (const tag of operation.tags as string[]) tags.add(tag);
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = asDeclared(operation, route);
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Intent submission service",
      version: "1.0.0",
      description: "Accepts signed intents (Variant A: payload + signature; Variant B: " +
        "authorship + intent), verifies Ed25519, passkey (WebAuthn) and multisig signatures " +
        "over the RFC 8785 (JCS) bytes, stores each id once, and hands every accepted intent " +
        "on through one ordered, resumable feed. Every binary field is base58 (Bitcoin " +
        "alphabet). Every error is `{message, code}`. Every GET also answers HEAD.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    // Relative: resolved against wherever this document was fetched, so it names the serving
    // host, port and scheme on every deployment. The root, because the service answers there
    // (its `Location` headers and its page use absolute paths).
    servers: [{ url: "/", description: "The origin that serves this document." }],
    tags: [...tags].map((name) => ({ name })),
    paths,
    webhooks: webhookDeliveries(examples.intents.variant_a_ed25519.record),
    components: {
      schemas: {
        ...componentSchemas(),
        ...webhookComponentSchemas({ allowHttp: settings.webhooksAllowHttp }),
      },
      securitySchemes: {
        adminBearer: bearer("`Authorization: Bearer <ADMIN_TOKEN>`."),
        eventsBearer: bearer("`Authorization: Bearer <EVENTS_TOKEN>` (GET /events only)."),
        metricsBearer: bearer("`Authorization: Bearer <METRICS_TOKEN>` (GET /metrics only)."),
      },
    },
  };
}
