/**
 * The OpenAPI operations on templates, policies, the configuration, and the
 * operations endpoints.
 * @module
 */

import { ref } from "./components.ts";
import type { ExampleDocument } from "./examples.ts";
import {
  ERR,
  errorResponse,
  idParameter,
  jsonResponse,
  type Obj,
  REQUEST_ID_HEADER,
} from "./responses.ts";

/** `/templates`, `/templates/{id}` or `/policies`, `/policies/{id}`. */
export function documentPaths(kind: "template" | "policy", example: ExampleDocument): Obj {
  const plural = kind === "template" ? "templates" : "policies";
  return {
    [`/${plural}`]: {
      post: {
        operationId: `${plural}_add`,
        summary: `Store a ${kind} (admin)`,
        description: `The raw body is the ${kind}, any content type, non-empty, at most ` +
          `MAX_BODY_BYTES. Its id is the base58 SHA-256 of the exact body bytes; ${plural} are ` +
          "immutable. Sent as application/json it must be strict JSON; an object with an " +
          "`authorization` member (see the Authorization schema) governs the intents that " +
          "reference it: who signs them, with what weight, and approvals over time.",
        tags: [plural],
        requestBody: {
          required: true,
          content: {
            "*/*": {
              schema: {},
              examples: { example: { summary: `A ${kind}`, value: example.text } },
            },
          },
        },
        responses: {
          "200": jsonResponse(`Already stored.`, ref("DocumentId"), {
            example: { id: example.id },
          }),
          "201": jsonResponse(`Stored.`, ref("DocumentId"), {
            example: { id: example.id },
            headers: {
              Location: { description: `/${plural}/{id}`, schema: { type: "string" } },
            },
          }),
          "400": errorResponse(
            "The body is empty or the Content-Type is unusable; sent as application/json, the " +
              "body is not strict JSON, or its `authorization` member is not a valid quorum.",
            ["invalid_body", "invalid_json", "invalid_authorization"],
          ),
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "413": ERR.tooLarge,
          "500": ERR.internal,
          "503": ERR.unavailable,
        },
      },
    },
    [`/${plural}/{id}`]: {
      get: {
        operationId: `${plural}_get`,
        summary: `Read a ${kind} (public)`,
        description: "Spends one token of the client address's budget (RATE_LIMIT_PER_ADDRESS), " +
          "a 404 too. Served from memory once found; an id found missing stays 404 for 1 s.",
        tags: [plural],
        parameters: [idParameter(`The ${kind}'s content address.`)],
        responses: {
          "200": {
            description: `The exact bytes stored, with the stored content type.`,
            headers: {
              "X-Request-Id": REQUEST_ID_HEADER,
              ETag: { description: "The id, quoted.", schema: { type: "string" } },
            },
            content: { "*/*": { schema: {}, example: example.text } },
          },
          "404": ERR.notFound(kind),
          "405": ERR.methodNotAllowed,
          "500": ERR.internal,
        },
      },
    },
  };
}

const CONFIG_EXAMPLE = {
  evidence_extractor_url: "https://extractor.example/v1",
  effective_url: "https://extractor.example/v1",
  updated_at: "2026-01-01T12:00:00.000Z",
};
const ETAG = { description: "Version of the configuration.", schema: { type: "string" } };

/** `/config`. */
export function configPaths(): Obj {
  return {
    "/config": {
      get: {
        operationId: "config_get",
        summary: "Read the runtime configuration (admin)",
        tags: ["config"],
        responses: {
          "200": jsonResponse("The configuration.", ref("Config"), {
            example: CONFIG_EXAMPLE,
            headers: { ETag: ETAG },
          }),
          "500": ERR.internal,
        },
      },
      put: {
        operationId: "config_set",
        summary: "Set the runtime configuration (admin)",
        tags: ["config"],
        parameters: [{
          name: "If-Match",
          in: "header",
          required: false,
          description: "Apply only if the configuration still has this ETag (412 otherwise).",
          schema: { type: "string" },
        }],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: ref("ConfigBody"),
              example: { evidence_extractor_url: CONFIG_EXAMPLE.evidence_extractor_url },
            },
          },
        },
        responses: {
          "200": jsonResponse("The new configuration.", ref("Config"), {
            example: CONFIG_EXAMPLE,
            headers: { ETag: ETAG },
          }),
          "400": ERR.invalidJsonBody(["invalid_evidence_extractor_url"]),
          "405": ERR.methodNotAllowed,
          "408": ERR.timeout,
          "412": errorResponse("If-Match does not match.", ["precondition_failed"]),
          "413": ERR.tooLarge,
          "415": ERR.mediaType,
          "500": ERR.internal,
          "503": ERR.unavailable,
        },
      },
    },
  };
}

/** `/healthz`, `/readyz`, `/openapi.json` and `/metrics`. */
export function operationPaths(): Obj {
  return {
    "/healthz": {
      get: {
        operationId: "health_get",
        summary: "Liveness and storage check (public)",
        description: "KV is read for /healthz and /readyz at most once a second per process: " +
          "the outcome of a read answers both for a second.",
        tags: ["operations"],
        responses: {
          "200": jsonResponse("KV answers.", ref("Health"), { example: { status: "ok" } }),
          "503": errorResponse("KV does not answer.", ["unavailable"]),
        },
      },
    },
    "/readyz": {
      get: {
        operationId: "ready_get",
        summary: "Readiness: the storage answers and takes writes (public)",
        description: "200 while KV answers a read and the latest commit attempt of this " +
          "process in the last 30 seconds, if any, succeeded; else 503 with the reason in " +
          '`message` ("storage is not answering", "the last commit failed: storage full"). ' +
          "A probe never writes, and reads KV as /healthz does, at most once a second; a failed " +
          "commit is seen at once. Point a load balancer's readiness check here and its liveness " +
          "check at /healthz.",
        tags: ["operations"],
        responses: {
          "200": jsonResponse("Ready.", ref("Ready"), { example: { status: "ready" } }),
          "503": errorResponse(
            "KV does not answer, or the latest commit of the last 30 seconds failed.",
            ["unavailable"],
          ),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openapi_get",
        summary: "This document (public)",
        tags: ["operations"],
        responses: {
          "200": jsonResponse("The OpenAPI 3.1 document.", { type: "object" }),
        },
      },
    },
    "/metrics": {
      get: {
        operationId: "metrics_get",
        summary: "Prometheus metrics of this process (admin or metrics token)",
        tags: ["operations"],
        responses: {
          "200": {
            description: "Prometheus text exposition format 0.0.4.",
            headers: { "X-Request-Id": REQUEST_ID_HEADER },
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
  };
}

/** `/` and `/static/{name}`: the passkey page. */
export function pagePaths(): Obj {
  return {
    "/": {
      get: {
        operationId: "page_get",
        summary: "The passkey page (public)",
        tags: ["operations"],
        responses: {
          "200": {
            description: "An HTML page that signs and submits intents with a passkey.",
            content: { "text/html": { schema: { type: "string" } } },
          },
        },
      },
    },
    "/static/{name}": {
      get: {
        operationId: "static_get",
        summary: "A file of the passkey page (public)",
        tags: ["operations"],
        parameters: [{
          name: "name",
          in: "path",
          required: true,
          description: "One of the page's files (an allow-list; anything else is 404).",
          schema: { type: "string" },
        }],
        responses: {
          "200": {
            description: "The file, with its media type.",
            content: { "*/*": { schema: {} } },
          },
          "404": ERR.notFound("file"),
        },
      },
    },
  };
}
