/**
 * Templates and policies: content-addressed, immutable documents.
 * `POST /templates|/policies` and `GET /templates|/policies/{id}`.
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
export function postDocument(kind: DocumentKind) {
  return async (request: Request, ctx: RequestContext): Promise<Response> => {
    const { app } = ctx;
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
    const outcome = await app.store.putDocument(kind, id, { contentType, bytes });
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
export function getDocument(kind: DocumentKind) {
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
