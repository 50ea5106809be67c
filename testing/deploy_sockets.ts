/**
 * Deno Deploy's rule on outgoing sockets, applied to the process that loads
 * this module first: `Deno.connect` to port 443 is refused ("use
 * `Deno.connectTls`"), as Deploy's limits page says ("Using `Deno.connect`
 * to connect to these ports is prohibited"); every other connection, and
 * `Deno.connectTls` and `fetch`, are as they were.
 *
 * ```sh
 * deno run -A --preload testing/deploy_sockets.ts main.ts
 * ```
 *
 * The refusal is a `Deno.errors.PermissionDenied` whose message names
 * `Deno.connectTls`, thrown before any connection is tried. Importing this
 * module applies the rule: only preload it, never import it into a test.
 * @module
 */

const connect = Deno.connect as (options: unknown) => Promise<Deno.Conn>;

const REFUSAL =
  "Connecting to port 443 with Deno.connect is prohibited on Deno Deploy: please use Deno.connectTls";

Deno.connect = ((options: { transport?: string; port?: number }) => {
  if ((options.transport ?? "tcp") === "tcp" && options.port === 443) {
    return Promise.reject(new Deno.errors.PermissionDenied(REFUSAL));
  }
  return connect(options);
}) as typeof Deno.connect;
