/**
 * Templates and policies, content-addressed and immutable (docs/interface.md
 * §5): `POST /templates|/policies`, `GET /templates|/policies/{id}`, and their
 * OpenAPI operations.
 * @module
 */

import { base58 } from "@scure/base";
import { ServiceError } from "../../errors.ts";
import { checkDocument, documentQuorum } from "../../domain/governance.ts";
import { isJsonMediaType } from "../../media_type.ts";
import type { DocumentKind } from "../../domain/intent.ts";
import { readBody } from "../read_body.ts";
import { json } from "../respond.ts";
import type { RequestContext } from "../context.ts";
import type { Route } from "../route.ts";
import { ref } from "../openapi/components.ts";
import {
  ERR,
  errorResponse,
  header,
  idParameter,
  jsonResponse,
  location,
  REQUEST_ID_HEADER,
  shared,
} from "../openapi/responses.ts";

const DEFAULT_TYPE = "application/octet-stream";

/** The content type to store: the request's, when it is a sane header value. */
function storedContentType(request: Request): string {
  const type = request.headers.get("content-type");
  if (type === null || type.trim() === "") return DEFAULT_TYPE;
  if (type.length > 256 || !/^[\x20-\x7e]+$/.test(type)) {
    throw new ServiceError(
      "invalid_body",
      "Content-Type: must be at most 256 printable characters",
    );
  }
  return type.trim();
}

/** `POST /templates` or `POST /policies`: 201 `{id}` when new, 200 `{id}` when stored already. */
function postDocument(kind: DocumentKind) {
  return async (request: Request, { app }: RequestContext): Promise<Response> => {
    const contentType = storedContentType(request);
    const bytes = await readBody(request, {
      maxBytes: app.settings.maxBodyBytes,
      timeoutMs: app.settings.bodyTimeoutMs,
      deadlines: app.deadlines,
      stopping: app.stopping,
    });
    if (bytes.length === 0) {
      throw new ServiceError("invalid_body", `body: the ${kind} must not be empty`);
    }
    // Sent as JSON it must be strict JSON, and an `authorization` member a valid quorum.
    const quorum = checkDocument(
      { bytes, json: isJsonMediaType(contentType) },
      app.verifyContext.keys,
    );
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    const id = base58.encode(digest);
    const outcome = await app.store.putDocument(kind, id, { contentType, bytes }, {
      ruled: quorum?.rules !== undefined,
    });
    if (outcome === "exists" && quorum !== null) {
      // The first content type stays with the bytes: if under it they govern
      // nothing, a "200" here would let the sender believe they do.
      const stored = await app.store.getDocument(kind, id);
      const json = stored !== null && isJsonMediaType(stored.contentType);
      if (stored && documentQuorum({ bytes: stored.bytes, json }) === null) {
        throw new ServiceError(
          "invalid_authorization",
          `body: these bytes are stored already, under a content type with which the ${kind} ` +
            "governs nothing; a stored document never changes",
        );
      }
    }
    const path = kind === "template" ? "templates" : "policies";
    return json(outcome === "created" ? 201 : 200, { id }, { location: `/${path}/${id}` });
  };
}

/** `GET /templates/{id}` or `GET /policies/{id}`: the exact bytes, or 404. */
function getDocument(kind: DocumentKind) {
  return async (_request: Request, { app, params: [id] }: RequestContext): Promise<Response> => {
    const found = /^[1-9A-HJ-NP-Za-km-z]{1,64}$/.test(id)
      ? await app.store.getDocument(kind, id)
      : null;
    if (!found) throw new ServiceError("not_found", `no such ${kind}`);
    return new Response(found.bytes as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: {
        "content-type": found.contentType,
        // Immutable: the id is the hash of these bytes.
        "cache-control": "public, max-age=31536000, immutable",
        "etag": `"${id}"`,
        "x-content-type-options": "nosniff",
        // Documents are data, never active content on this origin.
        "content-security-policy": "default-src 'none'; sandbox",
      },
    });
  };
}

/**
 * The routes of one kind of document (docs/interface.md §5): written by the
 * admin, read by anyone for a token (§12).
 */
function documentRoutes(kind: DocumentKind): Route[] {
  const plural = kind === "template" ? "templates" : "policies";
  return [
    {
      method: "POST",
      path: `/${plural}`,
      access: "admin",
      handler: postDocument(kind),
      operation: (examples) => ({
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
              examples: { example: { summary: `A ${kind}`, value: examples[kind].text } },
            },
          },
        },
        responses: {
          "200": jsonResponse(`Already stored.`, ref("DocumentId"), {
            example: { id: examples[kind].id },
          }),
          "201": jsonResponse(`Stored.`, ref("DocumentId"), {
            example: { id: examples[kind].id },
            headers: location(`/${plural}/{id}`),
          }),
          "400": errorResponse(
            "The body is empty or the Content-Type is unusable; sent as application/json, the " +
              "body is not strict JSON, its `authorization` member is not a valid quorum, or " +
              "one of its rules is not valid (`invalid_rule`, naming the rule and, for its " +
              "CEL, the line, column and reason).",
            ["invalid_body", "invalid_json", "invalid_authorization", "invalid_rule"],
          ),
          ...shared("405", "408", "413", "500", "503"),
        },
      }),
    },
    {
      method: "GET",
      path: `/${plural}/{id}`,
      access: "public",
      cost: "one",
      handler: getDocument(kind),
      operation: (examples) => ({
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
              ETag: header("The id, quoted."),
            },
            content: { "*/*": { schema: {}, example: examples[kind].text } },
          },
          "404": ERR.notFound(kind),
          ...shared("405", "500"),
        },
      }),
    },
  ];
}

/** The routes of templates and policies. */
export const DOCUMENT_ROUTES = [
  ...documentRoutes("template"),
  ...documentRoutes("policy"),
];
