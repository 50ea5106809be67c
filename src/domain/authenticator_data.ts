/**
 * Reads the authenticator data of a WebAuthn assertion by its flags (docs/interface.md
 * §4; WebAuthn Level 3 §6.1): rpIdHash (32 bytes) ‖ flags (1) ‖ signCount (4),
 * then extensions only when the ED flag says so. Every byte is accounted for:
 * bytes the flags do not announce are signed but read by nobody, so the
 * service refuses them rather than store an assertion it cannot describe.
 * @module
 */

import { type CBORType, decodePartialCBOR } from "@levischuck/tiny-cbor";

/** Length of the fixed part: rpIdHash ‖ flags ‖ signCount. */
export const FIXED_AUTHENTICATOR_DATA_LENGTH = 37;

const FLAGS_INDEX = 32;
/** AT: attested credential data follows (registration only). */
export const FLAG_ATTESTED_CREDENTIAL_DATA = 0x40;
/** ED: a CBOR map of extension outputs follows. */
export const FLAG_EXTENSION_DATA = 0x80;

/** Authenticator data split into its parts. */
export interface AuthenticatorData {
  /** SHA-256 of the relying-party id (a view into the input). */
  rpIdHash: Uint8Array;
  /** The flags byte. */
  flags: number;
  /** The signature counter, big-endian. */
  signCount: number;
  /** The extension outputs by identifier, present exactly when ED is set. */
  extensions?: Map<string, CBORType>;
}

/**
 * Thrown for authenticator data whose layout does not match its flags.
 * `message` names the problem and never echoes the bytes.
 */
export class AuthenticatorDataError extends SyntaxError {
  override name = "AuthenticatorDataError";
}

/**
 * Splits assertion authenticator data by its flags: exactly 37 bytes when
 * neither AT (0x40) nor ED (0x80) is set; AT is refused, since an assertion
 * carries no credential; with ED, exactly one CBOR map of extension outputs,
 * keyed by text identifiers, follows and ends the data.
 *
 * The map is decoded by `@levischuck/tiny-cbor` (the decoder SimpleWebAuthn
 * uses), which refuses indefinite lengths, non-minimal length encodings and
 * duplicate keys, as CTAP2's canonical CBOR does.
 *
 * @param data the authenticator data bytes.
 * @returns its parts.
 * @throws {AuthenticatorDataError} when the length or the extensions do not
 *   match the flags.
 *
 * @example
 * ```ts
 * const authenticatorData = new Uint8Array(37); // rpIdHash ‖ flags ‖ signCount
 * authenticatorData[32] = 0x05; // user present, user verified
 * const { flags } = parseAuthenticatorData(authenticatorData);
 * const userPresent = (flags & 0x01) !== 0; // true
 * ```
 */
export function parseAuthenticatorData(data: Uint8Array): AuthenticatorData {
  if (data.length < FIXED_AUTHENTICATOR_DATA_LENGTH) {
    throw new AuthenticatorDataError("authenticator data is shorter than 37 bytes");
  }
  const flags = data[FLAGS_INDEX];
  const parts: AuthenticatorData = {
    rpIdHash: data.subarray(0, FLAGS_INDEX),
    flags,
    signCount: new DataView(data.buffer, data.byteOffset + FLAGS_INDEX + 1, 4).getUint32(0),
  };
  if ((flags & FLAG_ATTESTED_CREDENTIAL_DATA) !== 0) {
    throw new AuthenticatorDataError(
      "authenticator data has the attested credential data flag (0x40), which an assertion never has",
    );
  }
  if ((flags & FLAG_EXTENSION_DATA) === 0) {
    if (data.length !== FIXED_AUTHENTICATOR_DATA_LENGTH) {
      throw new AuthenticatorDataError(
        "authenticator data is longer than 37 bytes without the extension data flag (0x80)",
      );
    }
    return parts;
  }
  if (data.length === FIXED_AUTHENTICATOR_DATA_LENGTH) {
    throw new AuthenticatorDataError(
      "authenticator data has the extension data flag (0x80) but no extensions",
    );
  }
  parts.extensions = readExtensions(data);
  return parts;
}

/** Decodes the one CBOR map after the fixed part and checks it ends the data. */
function readExtensions(data: Uint8Array): Map<string, CBORType> {
  let value: CBORType;
  let used: number;
  try {
    [value, used] = decodePartialCBOR(data, FIXED_AUTHENTICATOR_DATA_LENGTH);
  } catch {
    // Malformed or unsupported CBOR, including nesting deep enough to
    // exhaust the stack (a RangeError, which leaves the isolate usable).
    throw new AuthenticatorDataError("authenticator data extensions are not well-formed CBOR");
  }
  const end = FIXED_AUTHENTICATOR_DATA_LENGTH + used;
  // The decoder reports the lengths a string claims even past the end of
  // the input, so an item cut short shows up as ending beyond the data.
  if (end > data.length) {
    throw new AuthenticatorDataError("authenticator data extensions are not well-formed CBOR");
  }
  if (!(value instanceof Map)) {
    throw new AuthenticatorDataError("authenticator data extensions are not a CBOR map");
  }
  for (const key of value.keys()) {
    if (typeof key !== "string") {
      throw new AuthenticatorDataError(
        "authenticator data extensions have an identifier that is not a text string",
      );
    }
  }
  if (end !== data.length) {
    throw new AuthenticatorDataError("authenticator data has bytes after the extensions map");
  }
  return value as Map<string, CBORType>;
}
