/**
 * The checks every answer to a hostile request must pass: a known error code
 * in exactly `{message, code}`, never a 5xx, never an echo of the input, and
 * a refusal wherever the case cannot be valid.
 * @module
 */

import { memberNames } from "./hostile_cases.ts";
import { ERROR_CODES } from "./valid_bodies.ts";

/** The parts of an answer the checks need. */
export interface Answer {
  status: number;
  contentType: string | null;
  body: Uint8Array;
}

/**
 * Checks one answer to a hostile body; returns a description of what is
 * wrong, or null when the answer keeps every promise.
 *
 * @param options.marker a long random string that must never come back in an error.
 * @param options.mustAccept the body is valid and unmutated: 201 expected.
 * @param options.mayAccept whether a 201 is allowed at all.
 */
export function checkAnswer(
  answer: Answer,
  options: { marker: string; mustAccept: boolean; mayAccept: boolean },
): string | null {
  const text = new TextDecoder().decode(answer.body);
  if (answer.status >= 500) return `server error ${answer.status}: ${text.slice(0, 200)}`;
  if (options.mustAccept && answer.status !== 201) {
    return `a valid body was refused with ${answer.status}: ${text.slice(0, 300)}`;
  }
  if (answer.status === 201) {
    if (!options.mayAccept) return `an invalid body was accepted: ${text.slice(0, 300)}`;
    return null;
  }
  if (answer.status < 400) return `unexpected status ${answer.status}`;
  if (answer.contentType !== "application/json") {
    return `error with Content-Type ${answer.contentType}`;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 200)}`;
  }
  const names = memberNames(body);
  if (names === null || names.join() !== "code,message") {
    return `error body members are ${JSON.stringify(names)}, not {message, code}`;
  }
  const { code, message } = body as { code: unknown; message: unknown };
  if (typeof code !== "string" || !ERROR_CODES.has(code)) return `unknown code ${code}`;
  if (typeof message !== "string" || message.length === 0) return "empty or non-string message";
  if (message.length > 512) return `message of ${message.length} characters`;
  if (echoes(message, options.marker)) return `message echoes the input: ${message}`;
  return null;
}

/**
 * Longest run of input characters an error message may repeat: member names
 * in paths are shown cut to 32 characters, so a client can tell which member
 * is meant without the service echoing long input.
 */
export const MAX_ECHO = 32;

/** True when `message` holds a run of more than {@link MAX_ECHO} characters of `marker`. */
function echoes(message: string, marker: string): boolean {
  const run = MAX_ECHO + 1;
  for (let i = 0; i + run <= marker.length; i++) {
    if (message.includes(marker.slice(i, i + run))) return true;
  }
  return false;
}
