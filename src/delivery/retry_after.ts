/**
 * The `Retry-After` response header (RFC 9110 §10.2.3), which a webhook
 * receiver may send with a 429 or 503 to say when to try again (docs/interface.md
 * §11: at most an hour of it is honoured).
 * @module
 */

/** The longest `Retry-After` a delivery honours, in seconds (docs/interface.md §11). */
export const MAX_RETRY_AFTER_S = 3600;

const DAYS = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAYS = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d\\d):(\\d\\d):(\\d\\d)";

// RFC 9110 §5.6.7: the preferred IMF-fixdate and the two obsolete forms recipients must accept.
const IMF_FIXDATE = new RegExp(`^${DAYS}, (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAYS}, (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAYS} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Reads a `Retry-After` value: either delay-seconds (digits only) or an
 * HTTP-date, turned into seconds from `nowMs` (rounded up; a date in the
 * past is 0).
 *
 * @param value the header's value (surrounding white space is ignored).
 * @param nowMs the current time, in milliseconds since the epoch.
 * @returns whole seconds to wait, or `null` when the value is neither form.
 *   (Whether it is short enough to honour is the caller's decision: see
 *   {@link MAX_RETRY_AFTER_S}.)
 *
 * @example
 * ```ts
 * parseRetryAfter("120", Date.now()); // 120
 * parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", Date.UTC(2015, 9, 21, 7, 27, 30)); // 30
 * parseRetryAfter("soon", Date.now()); // null
 * ```
 */
export function parseRetryAfter(value: string, nowMs: number): number | null {
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text);
  const at = parseHttpDate(text, nowMs);
  if (at === null) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

/**
 * An HTTP-date in any of its three forms, as milliseconds since the epoch,
 * or null. (`Date.parse` is not used: it accepts "1" as the year 2001.)
 */
export function parseHttpDate(text: string, nowMs: number): number | null {
  let day: string, month: string, year: number, time: string[];
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    [day, month, year, time] = [match[1], match[2], Number(match[3]), match.slice(4)];
  } else if ((match = RFC850_DATE.exec(text))) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date(nowMs).getUTCFullYear();
    year = Math.floor(thisYear / 100) * 100 + Number(match[3]);
    if (year > thisYear + 50) year -= 100;
    [day, month, time] = [match[1], match[2], match.slice(4)];
  } else if ((match = ASCTIME_DATE.exec(text))) {
    [month, day, time, year] = [match[1], match[2].trim(), match.slice(3, 6), Number(match[6])];
  } else {
    return null;
  }
  const [hours, minutes, seconds] = time.map(Number);
  const monthIndex = MONTHS.indexOf(month);
  const ms = Date.UTC(year, monthIndex, Number(day), hours, minutes, Math.min(seconds, 59));
  const date = new Date(ms);
  // Date.UTC rolls 31 Feb over into March (and years below 100 into the 1900s): such is no date.
  if (
    hours > 23 || minutes > 59 || seconds > 60 || date.getUTCDate() !== Number(day) ||
    date.getUTCMonth() !== monthIndex || date.getUTCFullYear() !== year
  ) {
    return null;
  }
  return ms;
}
