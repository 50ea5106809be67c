/**
 * The help texts of the command-line client's `webhooks` commands.
 * @module
 */

import { EVENT_TYPES } from "@intents/protocol/events";

const COMMON = `
Common options:
  --url URL      service URL (env INTENTS_URL, default http://localhost:8000)
  --token TOKEN  admin bearer token (env ADMIN_TOKEN)
  --json         print one JSON value on standard output, for scripts
  -h, --help     this help`;

const TYPES = `${EVENT_TYPES.slice(0, 4).join(", ")},\n  ${EVENT_TYPES.slice(4).join(", ")}`;

/** Help by command name; `webhooks` lists the commands. */
export const WEBHOOK_HELP: Record<string, string> = {
  webhooks: `Usage: deno task cli webhooks COMMAND [options]

The service pushes the feed to registered HTTPS endpoints, signed as the
Standard Webhooks specification defines, in the feed's order, retried until
acknowledged (admin).

Commands:
  webhooks add URL [--events a,b] [--description TEXT]   register an endpoint
  webhooks list                 list the endpoints
  webhooks get ID               show one: status, next event, lag, last attempt
  webhooks pause ID             stop its deliveries
  webhooks resume ID            resume a paused or disabled one where it stopped
  webhooks remove ID            remove it and its attempts log
  webhooks rotate ID [--overlap S]   a new secret (older ones sign S s more; default a day)
  webhooks replay ID --after EVENT   deliver again after an event id ("start": all)
  webhooks attempts ID [--limit N]   its latest attempts, newest first
  webhooks listen --port P --secret S   a local receiver that verifies and prints

Run "deno task cli webhooks COMMAND --help" for a command's options.
${COMMON}`,
  "webhooks add":
    `Usage: deno task cli webhooks add URL [--events a,b] [--description TEXT] [--json]

Registers an endpoint that receives the events after the feed's head from now
on. Prints it and its secret (whsec_…), which is shown now and at rotation
only: give it to the receiver, which verifies every delivery with it.
  --events a,b          only these types (default every type):
  ${TYPES}
  --description TEXT    at most 200 characters
${COMMON}`,
  "webhooks list": `Usage: deno task cli webhooks list [--json]

Lists the endpoints, oldest first: id, status, lag, URL.
${COMMON}`,
  "webhooks get": `Usage: deno task cli webhooks get ID [--json]

Shows an endpoint: status (disabled: gone or failing), the event it delivers
after, the next event it waits to deliver, its lag, and its last attempt.
${COMMON}`,
  "webhooks pause": `Usage: deno task cli webhooks pause ID [--json]

Stops an endpoint's deliveries until "webhooks resume".
${COMMON}`,
  "webhooks resume": `Usage: deno task cli webhooks resume ID [--json]

Resumes a paused or disabled endpoint where it stopped: the event it waits to
deliver is sent at once, on a fresh retry schedule.
${COMMON}`,
  "webhooks remove": `Usage: deno task cli webhooks remove ID [--json]

Removes an endpoint and its attempts log; its deliveries stop.
${COMMON}`,
  "webhooks rotate": `Usage: deno task cli webhooks rotate ID [--overlap S] [--json]

Prints a new secret for the endpoint, alone on standard output. Deliveries are
signed with it and, for at most S more seconds, with the older secrets too, so
the receiver can switch within that time.
  --overlap S   0 to 86400 (default 86400, a day); 0 retires the older secrets
                at once on every process (a secret that leaked)
${COMMON}`,
  "webhooks replay": `Usage: deno task cli webhooks replay ID --after EVENT [--json]

Delivers the endpoint's events again after the event id EVENT ("start": from
the feed's beginning): a consumer that lost data asks for it again.
  --after EVENT   an event id the service handed out, or "start"
${COMMON}`,
  "webhooks attempts": `Usage: deno task cli webhooks attempts ID [--limit N] [--json]

Lists the endpoint's latest delivery attempts, newest first: time, event id,
attempt number, HTTP status or error (timeout, connection, redirect,
refused_address, refused_url), duration. The last 100 are kept.
  --limit N   1 to 100 (default 20)
${COMMON}`,
  "webhooks listen": `Usage: deno task cli webhooks listen --port P --secret S [--json]

A local receiver for developers: listens on 127.0.0.1:P (0: any free port,
printed on standard error), verifies each delivery's signature and timestamp
with the secret S (or WEBHOOK_SECRET), prints it (one line per event; --json:
the event as one JSON line) and answers 204; a delivery that does not verify is
reported on standard error and answered 400, so the service sends it again.
Runs until interrupted. Register it with a service that allows it:
WEBHOOKS_ALLOW_HTTP=true and WEBHOOKS_ALLOW_PRIVATE=true.
  --port P     the port to listen on
  --secret S   the endpoint's secret, whsec_…
`,
};
