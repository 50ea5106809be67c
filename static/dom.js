// Small DOM helpers of the passkey page. The page runs under Trusted Types, so
// nothing here (or anywhere on the page) writes HTML: elements are built with
// createElement and filled with textContent.

import { IntentsError } from "./client.js";

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

/** A value as the page shows it: indented JSON. */
export function shown(value) {
  return JSON.stringify(value, null, 2);
}

/**
 * True for the client library's `IntentsError` of a refusal the service
 * answered (an HTTP status), not for a network failure or a view that does
 * not hold together.
 */
export function isRefusal(error) {
  return error instanceof IntentsError && error.status >= 400;
}

/** `status code: message` of the service's refusal, an `IntentsError`. */
export function describeRefusal(error) {
  return `${error.status} ${error.code}: ${error.message}`;
}

/** The refusal's error body as the service sent it: `{message, code}`. */
export function refusalBody(error) {
  return shown({ message: error.message, code: error.code });
}
