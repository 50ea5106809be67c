/**
 * The OpenAPI 3.1 document of the service, served at `GET /openapi.json`.
 * Schemas come from the valibot schemas that validate requests
 * (`components.ts`); examples are real signed requests (`examples.ts`).
 * @module
 */

import { componentSchemas } from "./components.ts";
import { openApiExamples } from "./examples.ts";
import { intentPaths } from "./intent_paths.ts";
import { rejectionPaths } from "./decision_paths.ts";
import type { Obj } from "./responses.ts";
import { configPaths, documentPaths, operationPaths, pagePaths } from "./service_paths.ts";
import { webhookComponentSchemas } from "./webhook_components.ts";
import { webhookDeliveries, webhookPaths } from "./webhook_paths.ts";

/** Route names and methods, as `buildRoutes()` lists them. */
export interface RouteShape {
  name: string;
  methods: Record<string, unknown>;
}

/**
 * Builds the OpenAPI 3.1 document.
 *
 * @param routes the served routes; a path is described only when it is served.
 * @returns the document as a plain JSON value.
 */
export function buildOpenApiDocument(routes: readonly RouteShape[] = []): Obj {
  const examples = openApiExamples();
  const all: Obj = {
    ...intentPaths(examples),
    ...rejectionPaths(),
    ...documentPaths("template", examples.template),
    ...documentPaths("policy", examples.policy),
    ...configPaths(),
    ...operationPaths(),
    ...pagePaths(),
    ...webhookPaths(),
  };
  const served = new Set(routes.map((route) => route.name));
  const paths: Obj = {};
  for (const [path, operations] of Object.entries(all)) {
    if (served.has(path)) paths[path] = operations;
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
    tags: [
      { name: "intents" },
      { name: "approvals" },
      { name: "events" },
      { name: "templates" },
      { name: "policies" },
      { name: "config" },
      { name: "operations" },
      { name: "webhooks" },
    ],
    paths,
    webhooks: webhookDeliveries(examples.intents.variant_a_ed25519.record),
    components: {
      schemas: { ...componentSchemas(), ...webhookComponentSchemas() },
      securitySchemes: {
        adminBearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <ADMIN_TOKEN>`.",
        },
        eventsBearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <EVENTS_TOKEN>` (GET /events only).",
        },
        metricsBearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <METRICS_TOKEN>` (GET /metrics only).",
        },
      },
    },
  };
}
