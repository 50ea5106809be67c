// A JSON value as nested HTML a person can read: objects as definition lists
// (member names as labels), arrays as numbered lists, scalars as JSON literals
// (so "1" and 1 differ). What is shown is what gets signed, so characters that
// do not show (controls, zero-width and bidirectional marks) are written as
// \u escapes rather than left to rearrange or hide the text around them.

import { el } from "./dom.js";

// C0 and C1 controls, soft hyphen, Arabic letter mark, Hangul fillers, Mongolian vowel separator,
// zero-width and directional marks, line and paragraph separators, bidi embeddings and
// isolates, invisible operators, variation selectors, the byte order mark and specials.
const HIDDEN =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb]/g;

/** `text` with every character that does not show written as a \u escape. */
export function visible(text) {
  return text.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function scalar(value) {
  const kind = value === null ? "null" : typeof value;
  return el("span", { className: `json-${kind}`, text: visible(JSON.stringify(value)) });
}

/** The element showing `value` (a parsed JSON value). */
export function jsonView(value) {
  if (Array.isArray(value)) {
    if (value.length === 0) return el("span", { className: "json-empty", text: "[]" });
    const list = el("ol", { className: "json-array" });
    list.start = 0;
    for (const item of value) {
      const entry = el("li");
      entry.append(jsonView(item));
      list.append(entry);
    }
    return list;
  }
  if (typeof value === "object" && value !== null) {
    const names = Object.keys(value);
    if (names.length === 0) return el("span", { className: "json-empty", text: "{}" });
    const list = el("dl", { className: "json-object" });
    for (const name of names) {
      const label = el("dt", { text: name === "" ? '""' : visible(name) });
      const item = el("dd");
      item.append(jsonView(value[name]));
      list.append(label, item);
    }
    return list;
  }
  return scalar(value);
}
