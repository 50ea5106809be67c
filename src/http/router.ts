/**
 * Finds a request's endpoint by its method and path, from the endpoints'
 * own path templates (`endpoint.ts`).
 * @module
 */

import type { Endpoint } from "./endpoint.ts";

/** What a path matched: its template, the endpoint for the method if any, and the parameters. */
export interface Found {
  /** The template of the path matched, e.g. `/intents/{id}`. */
  path: string;
  /** The endpoint of the method; undefined when the path has none for it (a 405). */
  endpoint: Endpoint | undefined;
  /** The template's parameters, in order, still URL-encoded. */
  params: string[];
  /** The methods of the path, for `Allow` (`HEAD` after a `GET`). */
  allow: string;
}

/** One path template and its endpoints by method. */
interface PathRoute {
  path: string;
  pattern: RegExp | null;
  methods: Map<string, Endpoint>;
  allow: string;
}

const PARAMETER = /^\{[a-z_]+\}$/;

/**
 * The pattern of a path template: each `{name}` segment captures one
 * segment; null when the template has no parameter (it is compared whole).
 *
 * @throws {SyntaxError} when the template is not `/`-separated literal segments and `{name}`s.
 */
export function templatePattern(path: string): RegExp | null {
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
  return hasParameter ? new RegExp(`^/${parts.join("/")}$`) : null;
}

/**
 * The endpoints by path and method.
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
  readonly #exact = new Map<string, PathRoute>();
  /** Templates with parameters, in declaration order. */
  readonly #patterns: PathRoute[] = [];

  /**
   * @param endpoints each method and path once; a path's methods in the order `Allow` lists them.
   * @throws {SyntaxError} for a bad template; {@link RangeError} for an endpoint declared
   *   twice, or a token endpoint with an address cost (its budget is the wrong tokens').
   */
  constructor(endpoints: readonly Endpoint[]) {
    const byPath = new Map<string, PathRoute>();
    for (const endpoint of endpoints) {
      let route = byPath.get(endpoint.path);
      if (route === undefined) {
        route = {
          path: endpoint.path,
          pattern: templatePattern(endpoint.path),
          methods: new Map(),
          allow: "",
        };
        byPath.set(endpoint.path, route);
        if (route.pattern === null) this.#exact.set(endpoint.path, route);
        else this.#patterns.push(route);
      }
      if (route.methods.has(endpoint.method)) {
        throw new RangeError(`${endpoint.method} ${endpoint.path} is declared twice`);
      }
      if (endpoint.access !== "public" && (endpoint.cost ?? "none") !== "none") {
        throw new RangeError(`${endpoint.method} ${endpoint.path}: a token endpoint has no cost`);
      }
      route.methods.set(endpoint.method, endpoint);
    }
    for (const route of byPath.values()) {
      const allow = [...route.methods.keys()];
      if (route.methods.has("GET")) allow.push("HEAD");
      route.allow = allow.join(", ");
    }
  }

  /**
   * The endpoint of `method` (HEAD is GET's) on `path`, or null when no
   * template matches the path.
   */
  find(method: string, path: string): Found | null {
    let route = this.#exact.get(path);
    let params: string[] = [];
    if (route === undefined) {
      for (const candidate of this.#patterns) {
        const match = candidate.pattern!.exec(path);
        if (match === null) continue;
        route = candidate;
        params = match.slice(1);
        break;
      }
      if (route === undefined) return null;
    }
    const endpoint = route.methods.get(method === "HEAD" ? "GET" : method);
    return { path: route.path, endpoint, params, allow: route.allow };
  }
}
