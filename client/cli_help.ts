/**
 * The help texts of the command-line client.
 * @module
 */

/** The service URL when neither --url nor INTENTS_URL is given. */
export const DEFAULT_URL = "http://localhost:8000";

const COMMON_HELP = `
Common options:
  --url URL      service URL (env INTENTS_URL, default ${DEFAULT_URL})
  --token TOKEN  admin bearer token (env ADMIN_TOKEN)
  --json         print one JSON value on standard output, for scripts
  -h, --help     this help`;

/** Help by command name; `main` lists the commands. */
export const HELP: Record<string, string> = {
  main: `Usage: deno task cli COMMAND [options]

Commands:
  keygen           make an Ed25519 key file
  template add     store a template (admin)
  template get     print a stored template
  policy add       store a policy (admin)
  policy get       print a stored policy
  sign             sign a Variant A (--template) or Variant B (--policy) body
  submit           submit a signed body
  get              show a stored intent (admin)
  list             list stored intents, newest first (admin)
  events           print the feed of accepted intents, in order (admin or events token)
  config get       show the runtime configuration (admin)
  config set       set the evidence extractor URL (admin)

Run "deno task cli COMMAND --help" for a command's options.
Exit codes: 0 success, 1 refused by the service or unreachable, 2 usage error.
${COMMON_HELP}`,
  keygen: `Usage: deno task cli keygen [--out FILE] [--force] [--json]

Makes an Ed25519 key pair. With --out, writes the key file
{"kind":"Ed25519","secret_key","public_key"} (base58) there, readable by its
owner only, and prints the public key; without it, prints the key file.
  --out FILE   where to write the key file
  --force      overwrite FILE if it exists
${COMMON_HELP}`,
  "template add": `Usage: deno task cli template add FILE [--content-type TYPE] [--json]

Stores FILE (or - for standard input) as a template; prints its id, the base58
SHA-256 of the exact bytes. --json prints {"id": …}.
  --content-type TYPE  stored content type (default application/json)
${COMMON_HELP}`,
  "template get": `Usage: deno task cli template get ID

Writes the stored template's exact bytes to standard output.
${COMMON_HELP}`,
  "policy add": `Usage: deno task cli policy add FILE [--content-type TYPE] [--json]

Stores FILE (or - for standard input) as a policy; prints its id, the base58
SHA-256 of the exact bytes. --json prints {"id": …}.
  --content-type TYPE  stored content type (default application/json)
${COMMON_HELP}`,
  "policy get": `Usage: deno task cli policy get ID

Writes the stored policy's exact bytes to standard output.
${COMMON_HELP}`,
  sign: `Usage: deno task cli sign --key FILE (--template ID | --policy ID) [--id ID]
                     [--fields JSON | --fields-file FILE] [--out FILE]
       deno task cli sign --key FILE --payload FILE [--out FILE]

Prints a signed request body (JSON) for "submit". --template makes Variant A
(payload), --policy makes Variant B (intent; the id must be a UUID). Without
--id, a random UUID is used. --fields sets attrs.fields (a JSON object).
--payload reads the whole payload or intent from FILE (or -): one with
template_id is signed as Variant A, one with policy_id as Variant B.
  --key FILE          Ed25519 key file from "keygen"
  --out FILE          write the body to FILE instead of standard output
${COMMON_HELP}`,
  submit: `Usage: deno task cli submit FILE [--json]

Submits the body in FILE (or - for standard input) exactly as it is. Prints the
stored record; on refusal prints the service's message and code and exits 1
(--json prints {"message", "code"} on standard output).
${COMMON_HELP}`,
  get: `Usage: deno task cli get ID [--json]

Shows a stored intent (admin).
${COMMON_HELP}`,
  list: `Usage: deno task cli list [--limit N] [--cursor CURSOR] [--json]

Lists stored intents, newest first (admin). --json prints {"items", "cursor"}.
  --limit N        1 to 100 (default 20)
  --cursor CURSOR  the cursor printed with the previous page
${COMMON_HELP}`,
  events: `Usage: deno task cli events [--after ID] [--follow] [--json]

Prints the feed of accepted intents in the service's one order, one line per
event: its id, time, type and the intent. --json prints each event as one JSON
line ({"id", "type", "record"}), for "| jq". Without --follow it stops at the
end of the feed; with it, it waits for new events and reconnects by itself.
Pass the last id you processed as --after to resume after it.
  --after ID   start after this event id (default: from the beginning)
  --follow     keep printing new events as they are accepted
  The token is --token, else EVENTS_TOKEN, else ADMIN_TOKEN.
${COMMON_HELP}`,
  "config get": `Usage: deno task cli config get [--json]

Shows the runtime configuration and its ETag (admin).
${COMMON_HELP}`,
  "config set": `Usage: deno task cli config set URL [--if-match ETAG] [--json]

Sets the evidence extractor URL ("" selects the default) (admin).
  --if-match ETAG  only if the configuration still has this ETag
${COMMON_HELP}`,
};
