/**
 * denokv's error answers (`denokv/main.rs`, `ApiError`): a status and a plain
 * text body, the same text denokv writes, so a client here fails as it would
 * against denokv.
 * @module
 */

/** An error answer: HTTP status and plain text body. */
export interface ApiError {
  status: number;
  message: string;
}

/** The answers the HTTP layer itself gives, before the backend is asked. */
export const API_ERRORS = {
  notFound: { status: 404, message: "Resource not found." },
  malformedAuthorization: { status: 401, message: "Malformed authorization header." },
  invalidAccessToken: { status: 401, message: "Invalid access token." },
  invalidDatabaseId: { status: 400, message: "Invalid database id." },
  invalidProtocolVersion: { status: 400, message: "Expected protocol version 2." },
  minimumProtocolVersion: {
    status: 400,
    message: "The server requires at least protocol version 2. Use Deno 1.38.0 or newer.",
  },
  noMatchingProtocolVersion: {
    status: 400,
    message:
      "The server could not negotiate a protocol version. The server requires protocol version 2 or 3.",
  },
  keyTooLong: { status: 400, message: "A key exceeds the key size limit." },
  tooManyWatchedKeys: { status: 400, message: "Too many keys watched in a single watch request." },
  // axum's default body limit (2 MiB), which denokv keeps.
  bodyTooLarge: {
    status: 413,
    message: "Failed to buffer the request body: length limit exceeded",
  },
  internal: { status: 500, message: "An internal server error occurred." },
} as const satisfies Record<string, ApiError>;

/**
 * The addon names denokv's `ConvertError` variant; denokv answers each with
 * this status and text. `DecodeError` (a value that does not decode) is a 500
 * in denokv too.
 */
const CONVERT_ERRORS: Record<string, ApiError> = {
  KeyTooLong: API_ERRORS.keyTooLong,
  ValueTooLong: { status: 400, message: "A value exceeds the value size limit." },
  ReadRangeTooLarge: {
    status: 400,
    message:
      "The total number of entries requested across read ranges in the read request is too large.",
  },
  AtomicWriteTooLarge: { status: 400, message: "The total size of the atomic write is too large." },
  TooManyReadRanges: {
    status: 400,
    message: "Too many read ranges requested in one read request.",
  },
  TooManyWatchedKeys: API_ERRORS.tooManyWatchedKeys,
  TooManyChecks: { status: 400, message: "Too many checks included in atomic write." },
  TooManyMutations: {
    status: 400,
    message: "Too many mutations / enqueues included in atomic write.",
  },
  TooManyQueueUndeliveredKeys: {
    status: 400,
    message: "Too many dead letter keys for a single queue message.",
  },
  TooManyQueueBackoffIntervals: {
    status: 400,
    message: "Too many backoff intervals for a single queue message.",
  },
  QueueBackoffIntervalTooLarge: {
    status: 400,
    message: "A backoff interval exceeds the maximum allowed backoff interval.",
  },
  InvalidReadRangeLimit: {
    status: 400,
    message: "The read range limit of the snapshot read request is invalid.",
  },
  DecodeError: API_ERRORS.internal,
  InvalidVersionstamp: { status: 400, message: "Invalid versionstamp." },
  InvalidMutationKind: { status: 400, message: "Invalid mutation kind or arguments." },
  InvalidMutationExpireAt: { status: 400, message: "Invalid mutation expire at." },
  InvalidMutationEnqueueDeadline: { status: 400, message: "Invalid mutation enqueue deadline." },
};

/**
 * denokv's `SqliteBackendError::TypeMismatch` and `SumOutOfRange` texts (as
 * found in the 0.14.0 addon): denokv answers them 400 with the text itself.
 */
const TYPE_MISMATCH = [
  /^Failed to perform '\w+' mutation on a non-U64 value/,
  /^Min\/max parameters have different types than the operand/,
  /^Some of the parameters are not valid V8 values/,
  /^Invalid sum operand/,
  /^Cannot use min\/max parameters with KvU64 operands/,
  /^The result of a Sum operation would exceed its range limit/,
];

/**
 * Maps the first line of an addon error to denokv's answer. Anything not
 * known here is a 500, as denokv answers a SQLite or generic backend error.
 */
export function apiErrorOf(backendMessage: string): ApiError {
  const known = CONVERT_ERRORS[backendMessage];
  if (known) return known;
  if (backendMessage.startsWith("failed to decode Protobuf message")) {
    return { status: 400, message: `Request protobuf is invalid: ${backendMessage}.` };
  }
  if (backendMessage === "Database is closed.") {
    return { status: 503, message: "The server is temporarially unavailable, try again later." };
  }
  if (backendMessage === "Can not write to a read-only database.") {
    return { status: 400, message: "This database is read only." };
  }
  if (/^The value encoding -?\d+ is unknown\.$/.test(backendMessage)) {
    return { status: 400, message: backendMessage };
  }
  if (TYPE_MISMATCH.some((pattern) => pattern.test(backendMessage))) {
    return { status: 400, message: backendMessage };
  }
  return API_ERRORS.internal;
}
