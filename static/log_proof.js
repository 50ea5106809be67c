// The verifiable log's part of the passkey page: for an intent the page
// submitted, it computes the entry of the record the service answered, asks
// GET /log/proof?leaf= until the signed checkpoint covers it, and checks the
// proof with the client library against the log's key (and the witnesses and
// quorum given in the page's URL: ?log_key=…&witness=…&quorum=K; without
// log_key, the key this service serves at /log/key, shown so that it can be
// compared with one obtained elsewhere).

import { entryBytes, IntentsClient, LogVerificationError } from "./client.js";
import { $, describeError, isRefusal, shown } from "./dom.js";

/** How long the page waits for the checkpoint to cover an entry (it is signed within seconds). */
const WAIT_MS = 30_000;

function show(state, summary, body = "") {
  const section = $("log-proof");
  section.hidden = false;
  section.dataset.state = state;
  $("log-summary").textContent = summary;
  $("log-body").textContent = body;
}

/** The trust policy: from the page's URL, else the key the service serves. */
async function policyOf(client) {
  const query = new URLSearchParams(location.search);
  const witnesses = query.getAll("witness");
  const quorum = query.has("quorum") ? Number(query.get("quorum")) : witnesses.length;
  const given = query.get("log_key");
  const logKey = given ?? await client.log.key();
  return { logKey, witnesses, quorum, nowS: Math.floor(Date.now() / 1000), served: given === null };
}

/**
 * Shows where the stored record (201 accepted, 202 pending) is in the
 * service's verifiable log, and whether its inclusion proof verifies.
 */
export async function showLogProof(record) {
  const client = new IntentsClient({ url: location.origin });
  const type = record.state === "pending" ? "intent.pending" : "intent.accepted";
  show("working", "Log: waiting for a signed checkpoint to cover this intent…");
  let policy;
  try {
    const { served, ...rest } = await policyOf(client);
    policy = rest;
    const entry = entryBytes(type, record);
    const { verdict } = await client.log.proveEntry(entry, policy, { waitMs: WAIT_MS });
    const cosigners = verdict.cosigned.map((c) => c.name);
    show(
      "verified",
      `Log: the inclusion proof verifies. This intent's ${type} event is entry ` +
        `${verdict.index} (event ${verdict.index + 1}) of a checkpoint of ` +
        `${verdict.checkpoint.size} ${verdict.checkpoint.size === 1 ? "entry" : "entries"} ` +
        "signed by the log's key" +
        (cosigners.length > 0 ? ` and cosigned by ${cosigners.join(", ")}.` : "."),
      shown({
        log_key: policy.logKey,
        log_key_from: served ? "this service (/log/key): compare it with one you trust" : "the URL",
        witnesses: policy.witnesses,
        quorum: policy.quorum,
        cosigned_by: cosigners,
        origin: verdict.checkpoint.origin,
        index: verdict.index,
        checkpoint_size: verdict.checkpoint.size,
      }),
    );
  } catch (error) {
    if (error instanceof LogVerificationError) {
      show(
        "bad",
        `Log: the proof does NOT verify (${error.code}): ${error.message}`,
        shown(policy),
      );
    } else if (isRefusal(error) && error.status === 404) {
      show("failed", "Log: no checkpoint covers this intent yet, or this service has no log.");
    } else {
      show("failed", `Log: not checked: ${describeError(error)}`);
    }
  }
}
