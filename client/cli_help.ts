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

// One text for both: template add and policy add choose the content type alike.
const MEDIA_TYPE_HELP =
  `The content type sent and stored with it follows FILE's extension, in any case:
  .json           application/json
  .txt, .md       text/plain; charset=utf-8
  .yaml, .yml     application/yaml
  anything else   application/octet-stream
Standard input is application/json when its text parses as JSON, else
application/octet-stream. Only a document sent as application/json governs
intents (with an "authorization" member naming signers and threshold); the
service refuses one that looks governed sent as any other type.
  --content-type TYPE  store it as TYPE, whatever FILE is`;

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
  submit           submit a signed body (stored, or pending approvals)
  approvals        show what a pending intent waits for (public)
  approve          approve a pending intent with a key file (public)
  reject           reject a pending intent with a key file (public)
  get              show a stored intent (admin)
  list             list stored intents, newest first (admin)
  events           print the feed of intents' lives, in order (admin or events token)
  config get       show the runtime configuration (admin)
  config set       set the evidence extractor URL (admin)
  webhooks …       push the feed to HTTPS endpoints: add, list, get, pause,
                   resume, remove, rotate, replay, attempts (admin); listen
                   (a local receiver); see "webhooks --help"
  log …            check the verifiable log: keygen, checkpoint, prove, verify,
                   audit, watch; see "log --help"

Run "deno task cli COMMAND --help" for a command's options.
Exit codes: 0 success, 1 refused by the service or unreachable, 2 usage error,
3 the log did not verify (log commands).
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
${MEDIA_TYPE_HELP}
${COMMON_HELP}`,
  "template get": `Usage: deno task cli template get ID

Writes the stored template's exact bytes to standard output.
${COMMON_HELP}`,
  "policy add": `Usage: deno task cli policy add FILE [--content-type TYPE] [--json]

Stores FILE (or - for standard input) as a policy; prints its id, the base58
SHA-256 of the exact bytes. --json prints {"id": …}.
${MEDIA_TYPE_HELP}
${COMMON_HELP}`,
  "policy get": `Usage: deno task cli policy get ID

Writes the stored policy's exact bytes to standard output.
${COMMON_HELP}`,
  sign: `Usage: deno task cli sign --key FILE (--template ID | --policy ID) [--id ID]
                     [--fields JSON | --fields-file FILE] [--out FILE]
       deno task cli sign --key FILE --payload FILE [--out FILE]

Prints a signed request body (JSON) for "submit". --template makes Variant A
(payload), --policy makes Variant B (intent; the id must be a UUID). Without
--id, a new UUIDv7 is used. --fields sets attrs.fields (a JSON object).
--payload reads the whole payload or intent from FILE (or -): one with
template_id is signed as Variant A, one with policy_id as Variant B.
  --key FILE          Ed25519 key file from "keygen"
  --out FILE          write the body to FILE instead of standard output
${COMMON_HELP}`,
  submit: `Usage: deno task cli submit FILE [--dry-run] [--json]

Submits the body in FILE (or - for standard input) exactly as it is. Prints the
stored record; on refusal prints the service's message and code and exits 1
(--json prints {"message", "code"} on standard output). Under a governed
template or policy whose threshold the body's signatures do not reach, the
intent is stored pending: it prints "pending (weight 1 of 2)", the record, and
how the other signers approve it ("approve ID --key FILE"). --json prints the
record either way; its "state" is "accepted" or "pending". --dry-run checks the
body as a submission and stores nothing: it prints whether the intent would be
accepted or pending, and under a document with rules which rules were true.
${COMMON_HELP}`,
  approvals: `Usage: deno task cli approvals ID [--json]

Shows what an intent under a governed template or policy waits for. Pending:
the signed object every approver signs (payload or intent, as JSON), its
challenge and reject challenge, the weight so far of the threshold, when it
expires, and each signer's key and weight, [x] with the time for those who
have approved, [-] for those who have rejected. Under a document with rules,
the effective quorum's kinds and the rules that were true, each with its
condition and effect as the document (public) writes them. Accepted, expired or
rejected: only the state. --json prints the service's view
({"id", "state", …}). Public: no token is needed or sent.
${COMMON_HELP}`,
  approve: `Usage: deno task cli approve ID --key FILE [--json]

Approves a pending intent: reads its approvals view, checks that the view's
challenge is SHA-256 of the signed object's bytes, signs those bytes with the
Ed25519 key in FILE and sends the signature. Prints the state after it
("approved: weight 2 of 3, still pending" or "approved: accepted"); --json
prints the view. The same approval again prints the state as it stands. A
refusal prints the service's message and code (signer_not_authorized,
already_approved, already_rejected, not_pending, …) and exits 1.
Public: no token is needed or sent.
  --key FILE   Ed25519 key file from "keygen", one of the document's signers
${COMMON_HELP}`,
  reject: `Usage: deno task cli reject ID --key FILE [--json]

Rejects a pending intent: reads its approvals view, checks that the view's
reject challenge is SHA-256 of the rejection bytes ("intents:reject:" and the
signed object's bytes), signs those bytes with the Ed25519 key in FILE and
sends the signature. The intent is rejected once the keys that have not
rejected can no longer reach the threshold. Prints the state after it
("rejected by this key: weight 1 of 3, still pending" or "rejected by this
key: the intent is rejected"); --json prints the view. A refusal prints the
service's message and code (signer_not_authorized, already_approved,
already_rejected, not_pending, …) and exits 1. Public: no token is needed.
  --key FILE   Ed25519 key file from "keygen", one of the document's signers
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

Prints the feed in the service's one order, one line per event: its id, time,
type (intent.accepted; under governed documents also intent.pending,
intent.approval_added, intent.rejection_added, intent.rejected,
intent.expired), the intent's id, its state (with
weight/threshold when governed), reference and authorship kind. --json prints
each event as one JSON line ({"id", "type", "record"}), for "| jq". Without --follow it stops at the
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
