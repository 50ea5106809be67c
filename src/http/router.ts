/**
 * The routes of the service, in one table, and the router that finds a
 * request's route by its method and path.
 * @module
 */

import type { Route } from "./route.ts";
import { INTENT_ROUTES } from "./routes/intents.ts";
import { DRY_RUN_ROUTES } from "./routes/dry_run.ts";
import { APPROVAL_ROUTES } from "./routes/approvals.ts";
import { EVENT_ROUTES } from "./routes/events.ts";
import { DOCUMENT_ROUTES } from "./routes/documents.ts";
import { CONFIG_ROUTES } from "./routes/config.ts";
import { openApiRoute, OPERATION_ROUTES } from "./routes/operations.ts";
import { PAGE_ROUTES } from "./routes/static.ts";
import { WEBHOOK_ROUTES } from "./routes/webhooks.ts";
import { LOG_ROUTES } from "./routes/log.ts";

/**
 * Every route of the service, each declared once beside its handler in
 * `routes/`. A path's methods are in the order `Allow` names them, and the
 * document lists paths in the table's order.
 */
export function routes(): Route[] {
  const table = [
    ...INTENT_ROUTES,
    ...DRY_RUN_ROUTES,
    ...APPROVAL_ROUTES,
    ...EVENT_ROUTES,
    ...DOCUMENT_ROUTES,
    ...CONFIG_ROUTES,
    ...OPERATION_ROUTES,
    ...PAGE_ROUTES,
    ...WEBHOOK_ROUTES,
    ...LOG_ROUTES,
  ];
  // The document describes the table it is served from.
  table.push(openApiRoute(table));
  return table;
}

/** What a path matched: its template, the route for the method if any, and the parameters. */
export interface Found {
  /** The template of the path matched, e.g. `/intents/{id}`. */
  path: string;
  /** The route of the method; undefined when the path has none for it (a 405). */
  route: Route | undefined;
  /** The template's parameters, in order, still URL-encoded. */
  params: string[];
  /** The methods of the path, for `Allow` (`HEAD` after a `GET`). */
  allow: string;
}

/** One path template and its routes by method. */
interface PathRoutes {
  path: string;
  pattern: RegExp | null;
  methods: Map<string, Route>;
  allow: string;
}

const PARAMETER = /^\{[a-z_]+\}$/;

/**
 * The pattern of a path template: each `{name}` segment captures one
 * segment; null when the template has no parameter (it is compared whole).
 *
 * With `rest`, the last `{name}` takes the rest of the path, slashes and all.
 *
 * @throws {SyntaxError} when the template is not `/`-separated literal segments and `{name}`s.
 */
export function templatePattern(path: string, rest = false): RegExp | null {
  if (!path.startsWith("/")) throw new SyntaxError(`Cannot parse path template "${path}"`);
  let hasParameter = false;
  const parts = path.slice(1).split("/").map((segment) => {
    if (PARAMETER.test(segment)) {
      hasParameter = true;
      return "([^/]+)";
    }
    if (/[{}]/.test(segment)) {
      throw new SyntaxError(`Cannot parse path template "${path}": bad segment "${segment}"`);
    }
    return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  if (rest && parts.at(-1) === "([^/]+)") parts[parts.length - 1] = "(.+)";
  return hasParameter ? new RegExp(`^/${parts.join("/")}$`) : null;
}

/**
 * The routes by path and method.
 *
 * @example
 * ```ts
 * const router = new Router([{
 *   method: "GET",
 *   path: "/items/{id}",
 *   access: "public",
 *   handler: () => new Response(),
 *   operation: () => ({ summary: "An item" }),
 * }]);
 * router.find("GET", "/items/7")?.params; // ["7"]
 * router.find("PUT", "/items/7")?.allow; // "GET, HEAD"
 * router.find("GET", "/other"); // null
 * ```
 */
export class Router {
  /** Templates without parameters, by path. */
  readonly #exact = new Map<string, PathRoutes>();
  /** Templates with parameters, in declaration order. */
  readonly #patterns: PathRoutes[] = [];

  /**
   * @param routes each method and path once; a path's methods in the order `Allow` lists them.
   * @throws {SyntaxError} for a bad template; {@link RangeError} for a route declared
   *   twice, or a route behind a token with an address cost (its budget is the wrong tokens').
   */
  constructor(routes: readonly Route[]) {
    const byPath = new Map<string, PathRoutes>();
    for (const route of routes) {
      let entry = byPath.get(route.path);
      if (entry === undefined) {
        entry = {
          path: route.path,
          pattern: templatePattern(route.path, route.rest),
          methods: new Map(),
          allow: "",
        };
        byPath.set(route.path, entry);
        if (entry.pattern === null) this.#exact.set(route.path, entry);
        else this.#patterns.push(entry);
      }
      if (entry.methods.has(route.method)) {
        throw new RangeError(`${route.method} ${route.path} is declared twice`);
      }
      if (route.access !== "public" && (route.cost ?? "none") !== "none") {
        throw new RangeError(`${route.method} ${route.path}: a route behind a token has no cost`);
      }
      entry.methods.set(route.method, route);
      const head = entry.methods.has("GET") ? ["HEAD"] : [];
      entry.allow = [...entry.methods.keys(), ...head].join(", ");
    }
  }

  /** The route of `method` (HEAD is GET's) on `path`, or null when no template matches it. */
  find(method: string, path: string): Found | null {
    const wanted = method === "HEAD" ? "GET" : method;
    const exact = this.#exact.get(path);
    if (exact?.methods.has(wanted)) return this.#found(exact, wanted, []);
    // A literal path without this method leaves it to a template that has it: a `GET` of
    // `/intents/dry-run` reads the intent of that id.
    for (const candidate of this.#patterns) {
      const match = candidate.pattern!.exec(path);
      if (match === null) continue;
      if (exact === undefined || candidate.methods.has(wanted)) {
        return this.#found(candidate, wanted, match.slice(1));
      }
    }
    return exact === undefined ? null : this.#found(exact, wanted, []);
  }

  #found(entry: PathRoutes, method: string, params: string[]): Found {
    return { path: entry.path, route: entry.methods.get(method), params, allow: entry.allow };
  }
}
