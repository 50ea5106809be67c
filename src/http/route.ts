/**
 * What a route of the HTTP edge declares, once, beside its handler in
 * `routes/` (docs/architecture.md, "Routes").
 * @module
 */

import type { Settings } from "../settings.ts";
import type { Handler } from "./context.ts";
import type { OpenApiExamples } from "./openapi/examples.ts";
import type { Obj } from "./openapi/responses.ts";

/** The methods the service answers (a GET route also answers HEAD). */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Who may call a route (docs/interface.md §7): anyone, or the bearer of one of its tokens. */
export type Access = "public" | "admin" | "admin_or_events" | "admin_or_metrics";

/**
 * What a request costs its client address's budget (docs/interface.md §12):
 * nothing; one token before anything else; or that and, once its body is
 * read, the further tokens of its work.
 */
export type AddressCost = "none" | "one" | "work";

/** A route of the service: a method on a path template. */
export interface Route {
  method: Method;
  /**
   * The path template: `/`-separated literal segments and `{name}` parameters
   * (each one whole segment, handed to the handler still URL-encoded, in order).
   */
  path: string;
  access: Access;
  /** Default `"none"`. Only a public route has a cost: a route behind a token has its own budget. */
  cost?: AddressCost;
  /**
   * For a route behind a token that some requests may make without one
   * (docs/interface.md §14): true when this request, carrying no
   * `Authorization`, is let in as public, for one token of its client
   * address's budget.
   */
  publicWhen?: (request: Request, settings: Settings) => boolean;
  /** True when the template's last parameter takes the rest of the path, slashes and all. */
  rest?: boolean;
  handler: Handler;
  /** Its OpenAPI operation; `openapi/document.ts` adds what `access` and `cost` say. */
  operation: (examples: OpenApiExamples) => Obj;
}

/** What an {@link Access} means: the tokens it takes, and the OpenAPI security requirement. */
export interface AccessRule {
  /** The bearer tokens accepted (none: public). */
  tokens(settings: Settings): (string | undefined)[];
  /** The operation's `security` in the OpenAPI document (its `securitySchemes`). */
  security: readonly Readonly<Record<string, readonly string[]>>[];
}

/** Each {@link Access}, stated once for the checks and for the OpenAPI document. */
export const ACCESS: Readonly<Record<Access, AccessRule>> = {
  public: { tokens: () => [], security: [] },
  admin: { tokens: (s) => [s.adminToken], security: [{ adminBearer: [] }] },
  admin_or_events: {
    tokens: (s) => [s.adminToken, s.eventsToken],
    security: [{ adminBearer: [] }, { eventsBearer: [] }],
  },
  admin_or_metrics: {
    tokens: (s) => [s.adminToken, s.metricsToken],
    security: [{ adminBearer: [] }, { metricsBearer: [] }],
  },
};
