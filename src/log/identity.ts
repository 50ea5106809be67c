/**
 * The log's key and identity at start (docs/interface.md §14): the signer is
 * `LOG_SIGNING_KEY`, or, unset, the key kept in the store, made by the first
 * start in a commit that checks none exists (so every instance signs with
 * the same one). The store records the origin, the key id and the entry
 * format once; a start that disagrees stops, naming the variable (a new key
 * means a new log: a new origin).
 * @module
 */

import {
  generateNoteKey,
  keyIdHex,
  type NoteSigner,
  parseSignerKey,
} from "@intents/protocol/log/note";
import { SettingsError } from "../errors.ts";
import type { LogSettings } from "./settings.ts";
import { retryWhileLocked } from "../storage/retry.ts";
import {
  decodeIdentity,
  decodeText,
  encodeIdentity,
  encodeText,
  ENTRY_FORMAT,
  type LogIdentity,
  logKeys,
} from "./keys.ts";

/** The log's signer, as the log holds it. */
export type LogSigner = NoteSigner & { verifierKey: string };

/** What a start found: the signer, and whether this start made its key. */
export interface PreparedKey {
  signer: LogSigner;
  /** True when this start made the key and kept it in the store. */
  generated: boolean;
}

/**
 * The signer of this store's log, its identity recorded or checked.
 *
 * @throws {SettingsError} naming `LOG_ORIGIN` or `LOG_SIGNING_KEY` when the
 *   store's log has another origin or key, or its entries another format.
 */
export async function prepareLogKey(kv: Deno.Kv, settings: LogSettings): Promise<PreparedKey> {
  let signer = settings.signer;
  let generated = false;
  if (signer === undefined) {
    ({ signer, generated } = await keptSigner(kv, settings.origin));
  }
  const wanted: LogIdentity = {
    origin: signer.name,
    key_id: keyIdHex(signer.keyId),
    entries: ENTRY_FORMAT,
  };
  for (;;) {
    const entry = await kv.get<Uint8Array>(logKeys.identity);
    const held = decodeIdentity(entry.value);
    if (held !== null) {
      checkIdentity(held, wanted, settings.signer !== undefined);
      return { signer, generated };
    }
    const result = await retryWhileLocked(() =>
      kv.atomic().check(entry).set(logKeys.identity, encodeIdentity(wanted)).commit()
    );
    if (result.ok) return { signer, generated };
  }
}

/** The key kept in the store, made now (in a commit that checks none exists) when there is none. */
async function keptSigner(
  kv: Deno.Kv,
  origin: string,
): Promise<{ signer: LogSigner; generated: boolean }> {
  for (;;) {
    const entry = await kv.get<Uint8Array>(logKeys.signer);
    const text = decodeText(entry.value);
    if (text !== null) {
      const signer = parseSignerKey(text);
      if (signer.name !== origin) {
        throw new SettingsError(
          `LOG_ORIGIN: this store's log is ${signer.name}, signed by the key kept in the store; ` +
            "a log of another origin needs its own store, or LOG_SIGNING_KEY",
        );
      }
      return { signer, generated: false };
    }
    const { signerKey } = generateNoteKey(origin);
    const result = await retryWhileLocked(() =>
      kv.atomic().check({ key: logKeys.signer, versionstamp: null })
        .set(logKeys.signer, encodeText(signerKey)).commit()
    );
    if (result.ok) return { signer: parseSignerKey(signerKey), generated: true };
  }
}

function checkIdentity(held: LogIdentity, wanted: LogIdentity, keyGiven: boolean): void {
  if (held.origin !== wanted.origin) {
    throw new SettingsError(
      `${keyGiven ? "LOG_SIGNING_KEY" : "LOG_ORIGIN"}: this store's log is ${held.origin}, ` +
        `not ${wanted.origin} (a new origin needs a new store)`,
    );
  }
  if (held.key_id !== wanted.key_id) {
    throw new SettingsError(
      `LOG_SIGNING_KEY: this store's log ${held.origin} is signed by key ${held.key_id}, ` +
        `not ${wanted.key_id} (a new key means a new log: a new origin, in a new store)`,
    );
  }
  if (held.entries !== wanted.entries) {
    throw new SettingsError(
      `this store's log has entries of format ${held.entries}, which this version does not write`,
    );
  }
}
