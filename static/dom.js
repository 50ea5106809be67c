// Small DOM helpers of the passkey page. The page runs under Trusted Types, so
// nothing here (or anywhere on the page) writes HTML: elements are built with
// createElement and filled with textContent.

/** The element with this id; throws when the page lacks it. */
export function $(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`missing #${id}`);
  return element;
}

/**
 * A new element with text content and attributes.
 * @param {string} tag
 * @param {{text?: string, className?: string, title?: string}} [options]
 */
export function el(tag, options = {}) {
  const element = document.createElement(tag);
  if (options.text !== undefined) element.textContent = options.text;
  if (options.className) element.className = options.className;
  if (options.title) element.title = options.title;
  return element;
}

/** Sets a status line's text, marked bad (red) or not. */
export function setStatus(id, text, bad = false) {
  const element = $(id);
  element.textContent = text;
  element.classList.toggle("bad", bad);
}

/** A person-readable message for anything thrown. */
export function describeError(error) {
  if (error instanceof DOMException) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A response's body: its JSON value when it is JSON (else undefined) and the
 * text to show (indented JSON, or the text as it came, a proxy's page say).
 */
export async function readAnswer(response) {
  const text = await response.text();
  try {
    const answer = JSON.parse(text);
    return { answer, shown: JSON.stringify(answer, null, 2) };
  } catch {
    return { answer: undefined, shown: text };
  }
}

/** `status code: message` of a refusal body `{message, code}`, whatever came. */
export function describeRefusal(status, answer) {
  const code = typeof answer?.code === "string" ? answer.code : "unknown";
  const message = typeof answer?.message === "string" ? `: ${answer.message}` : "";
  return `${status} ${code}${message}`;
}
