/**
 * `GET /config` and `PUT /config`: the runtime configuration, with
 * `ETag` and `If-Match`; and their OpenAPI operations.
 * @module
 */

import { ServiceError } from "../../errors.ts";
import { ConfigBodySchema } from "../../domain/schemas.ts";
import { validate } from "../../domain/validate.ts";
import type { StoredConfig } from "../../domain/intent.ts";
import { json } from "../respond.ts";
import { type AppContext, readJsonBody, type RequestContext } from "../context.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import {
  ERR,
  errorResponse,
  header,
  jsonBody,
  jsonResponse,
  shared,
} from "../openapi/responses.ts";

// The ETag of the configuration before it was ever set.
const UNSET_TAG = "default";

/** The configuration as `GET /config` and `PUT /config` answer it, with its ETag. */
function render(app: AppContext, value: StoredConfig | null, version: string | null) {
  const url = value?.evidence_extractor_url ?? "";
  return json(200, {
    evidence_extractor_url: url,
    effective_url: url === "" ? app.settings.evidenceExtractorUrl : url,
    updated_at: value?.updated_at ?? null,
  }, { etag: `"${version ?? UNSET_TAG}"` });
}

/**
 * The versions an `If-Match` header accepts: undefined for "any"
 * (header absent or `*`), else the list (`null` = never set). Weak tags never
 * match: If-Match uses strong comparison (RFC 9110 §13.1.1).
 */
function parseIfMatch(header: string | null): (string | null)[] | undefined {
  if (header === null || header.trim() === "*") return undefined;
  return header.split(",").flatMap((part) => {
    const tag = /^\s*"([^"]*)"\s*$/.exec(part)?.[1];
    return tag === undefined ? [] : [tag === UNSET_TAG ? null : tag];
  });
}

async function getConfig(_request: Request, { app }: RequestContext): Promise<Response> {
  const { value, version } = await app.store.getConfig();
  return render(app, value, version);
}

/** `PUT /config`: 200 with the new configuration; 412 when `If-Match` does not match. */
async function putConfig(request: Request, { app }: RequestContext): Promise<Response> {
  const body = validate(ConfigBodySchema, await readJsonBody(request, app), "", {
    codes: { extractor_url: "invalid_evidence_extractor_url" },
  });
  const url = body.evidence_extractor_url;
  const stored: StoredConfig = { evidence_extractor_url: url, updated_at: app.now().toISOString() };
  const version = await app.store.setConfig(
    stored,
    parseIfMatch(request.headers.get("if-match")),
  );
  if (version === null) {
    throw new ServiceError(
      "precondition_failed",
      "If-Match does not match the current configuration's ETag",
    );
  }
  return render(app, stored, version);
}

const CONFIG_EXAMPLE = {
  evidence_extractor_url: "https://extractor.example/v1",
  effective_url: "https://extractor.example/v1",
  updated_at: "2026-01-01T12:00:00.000Z",
};
const ETAG = header("Version of the configuration.");

/** The configuration's routes (docs/interface.md §6): the admin's. */
export const CONFIG_ROUTES: Route[] = [
  {
    method: "GET",
    path: "/config",
    access: "admin",
    handler: getConfig,
    operation: () => ({
      operationId: "config_get",
      summary: "Read the runtime configuration (admin)",
      tags: ["config"],
      responses: {
        "200": jsonResponse("The configuration.", ref("Config"), {
          example: CONFIG_EXAMPLE,
          headers: { ETag: ETAG },
        }),
        ...shared("500"),
      },
    }),
  },
  {
    method: "PUT",
    path: "/config",
    access: "admin",
    handler: putConfig,
    operation: () => ({
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
      requestBody: jsonBody(ref("ConfigBody"), {
        evidence_extractor_url: CONFIG_EXAMPLE.evidence_extractor_url,
      }),
      responses: {
        "200": jsonResponse("The new configuration.", ref("Config"), {
          example: CONFIG_EXAMPLE,
          headers: { ETag: ETAG },
        }),
        "400": ERR.invalidJsonBody(["invalid_evidence_extractor_url"]),
        ...shared("405", "408", "413", "415", "500", "503"),
        "412": errorResponse("If-Match does not match.", ["precondition_failed"]),
      },
    }),
  },
];
