/**
 * The help texts and options of the `log` commands of the command-line client.
 * @module
 */

/** The options only the `log` commands read. */
export const LOG_OPTIONS = {
  name: { type: "string" },
  witness: { type: "string", multiple: true },
  quorum: { type: "string" },
  record: { type: "string" },
  entry: { type: "string" },
  state: { type: "string" },
  interval: { type: "string" },
  once: { type: "boolean" },
} as const;

const COMMON = `
Common options:
  --url URL      service URL (env INTENTS_URL, default http://localhost:8000)
  --token TOKEN  events or admin bearer token (env EVENTS_TOKEN, else ADMIN_TOKEN)
  --json         print one JSON value on standard output, for scripts
  -h, --help     this help`;

const POLICY = `
  --key VKEY       the log's verifier key (<name>+<key id>+<base64>), or a file
                   holding it; take it from somewhere you trust, not the service
  --witness VKEY   a witness's cosigner key (type 0x04), or a file; repeatable
  --quorum K       how many of the witnesses must have cosigned (default: all)`;

/** Help of the `log` commands by name; `log` lists them. */
export const LOG_HELP: Record<string, string> = {
  log: `Usage: deno task cli log COMMAND [options]

The verifiable log (docs/log.md): check, without trusting the service, that
the feed is the one every reader sees and that an entry is in it.

Commands:
  log keygen       make a log signer key (LOG_SIGNING_KEY) and its verifier key
  log checkpoint   fetch the signed checkpoint; check it with --key
  log prove        fetch an entry's inclusion proof; write it and the entry
  log verify       check a proof and its entry, offline
  log audit        recompute the tree from the feed and check the checkpoint
  log watch        follow the checkpoint, checking each against the last trusted

Exit codes: 0 verified, 1 refused by the service or unreachable, 2 usage
error, 3 the log did not verify (a bad signature, a proof that does not hold,
a split view).
${COMMON}`,
  "log keygen": `Usage: deno task cli log keygen --name ORIGIN [--json]

Makes an Ed25519 note key pair for a log whose origin is ORIGIN: prints the
signer key (PRIVATE+KEY+ORIGIN+…, the value of LOG_SIGNING_KEY: keep it
secret) on the first line and the verifier key on the second.
  --name ORIGIN  the log's origin, e.g. example.com/intents
${COMMON}`,
  "log checkpoint":
    `Usage: deno task cli log checkpoint [--key VKEY [--witness VKEY …] [--quorum K]]

Prints the signed checkpoint the service serves (a token is needed unless
LOG_PUBLIC=true). With --key, checks it first: signed by the log's key, of its
origin, cosigned by the quorum of witnesses; exit 3 if not.
${POLICY}
${COMMON}`,
  "log prove": `Usage: deno task cli log prove (ID | --record FILE) [--out PROOF] [--key VKEY …]

Fetches the inclusion proof (c2sp.org/tlog-proof@v1) of an entry and writes
it beside the entry it proves: ID is an event id (its record is read from the
feed: a token needed); FILE is an intent's record as the service answered it
(201 or 202, e.g. the output of "submit --json") or an event from "events
--json". The proof goes to FILE's name with .tlog-proof (event-ID.tlog-proof
for an ID), the entry to the same name with .entry. Waits up to 10 s for the
checkpoint to cover the entry. With --key, checks the proof before writing.
  --out PROOF    where to write the proof (the entry goes beside it)${POLICY}
${COMMON}`,
  "log verify":
    `Usage: deno task cli log verify PROOF --entry FILE --key VKEY [--witness VKEY …] [--quorum K]

Checks, without the service, that the entry in FILE is in the log at the
index PROOF names, under a checkpoint signed by the log's key and cosigned by
the quorum of witnesses; prints the index and the checkpoint. Exit 3 if not.
  --entry FILE   the entry's bytes (as "log prove" writes them)${POLICY}
${COMMON}`,
  "log audit": `Usage: deno task cli log audit --key VKEY [--witness VKEY …] [--quorum K]

Checks the signed checkpoint, then reads every event of the feed up to its
size (a token needed), recomputes each entry and the tree, and checks that
they make the checkpoint's root. Exit 3 if not.
${POLICY}
${COMMON}`,
  "log watch":
    `Usage: deno task cli log watch --key VKEY --state FILE [--interval S] [--once] [--witness VKEY …]

Follows the checkpoint: checks each against the policy and against the last
checkpoint trusted, kept in FILE (proving from the tiles that the tree only
grew), prints a line per round, and keeps the newer one. Stops with exit 3 on
anything inconsistent (a split view: two roots for one size, a tree that does
not extend the trusted one; a smaller tree; a bad signature), printing both
signed checkpoints; FILE then still holds the last trusted one.
  --state FILE   where the last trusted checkpoint is kept (made on the first round)
  --interval S   seconds between rounds (default 10)
  --once         one round, then exit${POLICY}
${COMMON}`,
};
