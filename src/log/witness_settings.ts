/**
 * The witness settings of docs/interface.md §2 and §14: `LOG_WITNESSES`,
 * `LOG_WITNESS_QUORUM`, `LOG_WITNESS_TIMEOUT_MS` and
 * `LOG_WITNESSES_ALLOW_INSECURE`, validated at boot like the others, a
 * malformed one stopping the server with a one-line message naming the
 * variable. A witness's URL follows the webhook URL rule (`checkWebhookUrl`),
 * with `http:` and private addresses allowed only when insecure.
 * @module
 */

import { parseCosignerKey } from "@intents/protocol/log/cosignature";
import { keyIdHex } from "@intents/protocol/log/note";
import { SettingsError } from "../errors.ts";
import { type Env, wholeNumber } from "../limits_settings.ts";
import { checkWebhookUrl } from "../webhooks/url.ts";

/** The most witnesses `LOG_WITNESSES` may name. */
export const MAX_WITNESSES = 15;

/** One witness: where it takes checkpoints and the key it cosigns with. */
export interface WitnessSetting {
  /** `<submission URL prefix>/add-checkpoint`. */
  url: string;
  /** Its cosigner verifier key (type 0x04). */
  key: string;
  /** The key's name (what its metrics and lines name it by). */
  name: string;
}

/** The validated witness settings. */
export interface WitnessSettings {
  /** `LOG_WITNESSES`, in the order given; empty when unset. */
  witnesses: WitnessSetting[];
  /** `LOG_WITNESS_QUORUM`: cosignatures a checkpoint needs before it is served. */
  quorum: number;
  /** `LOG_WITNESS_TIMEOUT_MS`: the most one witness call may take. */
  timeoutMs: number;
  /** `LOG_WITNESSES_ALLOW_INSECURE`: `http:` and private addresses allowed. */
  allowInsecure: boolean;
}

/**
 * Reads the witness settings.
 *
 * @throws {SettingsError} naming the variable: more than 15 witnesses, an
 *   entry that is not `<URL prefix>=<cosigner vkey>`, a URL the rule refuses,
 *   two witnesses with one key, a quorum above the number of witnesses, a
 *   timeout out of range, or a bad `LOG_WITNESSES_ALLOW_INSECURE`.
 */
export function readWitnessSettings(env: Env): WitnessSettings {
  const insecure = env.LOG_WITNESSES_ALLOW_INSECURE ?? "";
  if (insecure !== "" && insecure !== "true" && insecure !== "false") {
    throw new SettingsError('LOG_WITNESSES_ALLOW_INSECURE must be "true" or "false"');
  }
  const allowInsecure = insecure === "true";
  const raw = env.LOG_WITNESSES ?? "";
  const entries = raw === "" ? [] : raw.split(",").map((s) => s.trim());
  const form = "LOG_WITNESSES must be at most 15 comma-separated <submission URL prefix>=<vkey>";
  if (entries.length > MAX_WITNESSES || entries.some((e) => e === "")) {
    throw new SettingsError(form);
  }
  const seen = new Set<string>();
  const witnesses = entries.map((entry, i) => {
    // A vkey's base64 of 33 bytes has no padding: the last "=" ends the URL.
    const split = entry.lastIndexOf("=");
    if (split <= 0) throw new SettingsError(form);
    const prefix = entry.slice(0, split);
    const key = entry.slice(split + 1);
    let verifier;
    try {
      verifier = parseCosignerKey(key);
    } catch {
      throw new SettingsError(
        `LOG_WITNESSES: witness ${i + 1}'s key must be an Ed25519 cosigner vkey ` +
          "(<name>+<key id>+<base64 of 0x04 and the public key>)",
      );
    }
    const problem = checkWebhookUrl(prefix, {
      allowHttp: allowInsecure,
      allowPrivate: allowInsecure,
    });
    if (problem !== null) {
      throw new SettingsError(`LOG_WITNESSES: witness ${i + 1}'s URL prefix ${problem}`);
    }
    const url = new URL(prefix);
    if (url.search !== "") {
      throw new SettingsError(`LOG_WITNESSES: witness ${i + 1}'s URL prefix must have no query`);
    }
    const id = `${verifier.name}+${keyIdHex(verifier.keyId)}`;
    if (seen.has(id)) throw new SettingsError(`LOG_WITNESSES: two witnesses have the key ${id}`);
    seen.add(id);
    return {
      url: `${url.href.replace(/\/$/, "")}/add-checkpoint`,
      key,
      name: verifier.name,
    };
  });
  const quorum = wholeNumber(env, "LOG_WITNESS_QUORUM", 0, 0, witnesses.length);
  return {
    witnesses,
    quorum,
    timeoutMs: wholeNumber(env, "LOG_WITNESS_TIMEOUT_MS", 5_000, 100, 60_000),
    allowInsecure,
  };
}
