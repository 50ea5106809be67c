/**
 * The verifiable log's settings of docs/interface.md §2 and §14, read from
 * the environment like the others in `settings.ts`: validated at boot, a
 * malformed one stopping the server with a one-line message naming the
 * variable.
 * @module
 */

import { isValidKeyName, type NoteSigner, parseSignerKey } from "@intents/protocol/log/note";
import { SettingsError } from "../errors.ts";
import { readWitnessSettings, type WitnessSettings } from "./witness_settings.ts";

/** The origin of a log whose key is made at first start and `LOG_ORIGIN` is unset. */
export const DEFAULT_LOG_ORIGIN = "localhost/intents";

/** The validated log settings. */
export interface LogSettings {
  /** `LOG_ORIGIN`: the checkpoint's origin line and the key's name. */
  origin: string;
  /**
   * `LOG_SIGNING_KEY`, parsed: the seed stays inside the signer's closure, so
   * that the settings can be shown without it. Undefined: the key kept in
   * the store (made at first start).
   */
  signer: (NoteSigner & { verifierKey: string }) | undefined;
  /** `LOG_PUBLIC`: whether the checkpoint is readable without a token. */
  public: boolean;
  /** The witnesses that cosign checkpoints, and how (`witness_settings.ts`). */
  witnesses: WitnessSettings;
}

type Env = Record<string, string | undefined>;

/**
 * Reads the log's settings.
 *
 * @throws {SettingsError} naming the variable: a malformed `LOG_SIGNING_KEY`,
 *   a `LOG_ORIGIN` that is not a key name or differs from the key's name, no
 *   key where `DENO_DEPLOY=true` or with witnesses, witnesses without an
 *   explicit `LOG_ORIGIN`, a bad `LOG_PUBLIC`, or a malformed witness setting
 *   (`readWitnessSettings`).
 */
export function readLogSettings(env: Env): LogSettings {
  const given = env.LOG_ORIGIN === "" ? undefined : env.LOG_ORIGIN;
  if (given !== undefined && !isValidKeyName(given)) {
    throw new SettingsError("LOG_ORIGIN must be a non-empty name without spaces or '+'");
  }
  let signer: LogSettings["signer"];
  const key = env.LOG_SIGNING_KEY;
  if (key !== undefined && key !== "") {
    try {
      signer = parseSignerKey(key);
    } catch {
      // Never the key itself, nor the parser's words about it: it is a secret.
      throw new SettingsError(
        "LOG_SIGNING_KEY must be an Ed25519 signer key as golang.org/x/mod/sumdb/note writes it " +
          "(PRIVATE+KEY+<name>+<key id>+<base64>)",
      );
    }
    if (given !== undefined && given !== signer.name) {
      throw new SettingsError("LOG_ORIGIN must equal the name of LOG_SIGNING_KEY");
    }
  } else if (env.DENO_DEPLOY === "true") {
    throw new SettingsError(
      "LOG_SIGNING_KEY must be set where DENO_DEPLOY=true (every instance signs with it)",
    );
  }
  const witnesses = readWitnessSettings(env);
  if (witnesses.witnesses.length > 0) {
    // A witness keeps its state by origin: an origin by default could change under it.
    if (given === undefined) {
      throw new SettingsError("LOG_ORIGIN must be set explicitly where LOG_WITNESSES is set");
    }
    if (signer === undefined) {
      throw new SettingsError("LOG_SIGNING_KEY must be set where LOG_WITNESSES is set");
    }
  }
  const isPublic = env.LOG_PUBLIC ?? "";
  if (isPublic !== "" && isPublic !== "true" && isPublic !== "false") {
    throw new SettingsError('LOG_PUBLIC must be "true" or "false"');
  }
  return {
    origin: signer?.name ?? given ?? DEFAULT_LOG_ORIGIN,
    signer,
    public: isPublic === "true",
    witnesses,
  };
}
