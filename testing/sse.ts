/**
 * A small Server-Sent Events reader for the tests and the feed load tool,
 * following the HTML standard's parsing rules: lines end at CR, LF or CRLF;
 * `field: value` with one leading space removed; a blank line dispatches;
 * lines starting with ":" are comments.
 * @module
 */

/** One dispatched event, or a comment line. */
export type SseItem =
  | { kind: "event"; id: string | undefined; event: string; data: string }
  | { kind: "comment"; text: string };

/** An open stream: its items as they arrive, and a way to leave. */
export interface SseStream {
  response: Response;
  items: AsyncGenerator<SseItem>;
  close(): void;
}

/** Options of {@link openSse}. */
export interface OpenSseOptions {
  /** What makes the request; default the global `fetch` (in-process tests: the app's handler). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/**
 * Opens `GET url` with `Accept: text/event-stream`.
 *
 * @param headers extra request headers (e.g. `authorization`, `last-event-id`).
 */
export async function openSse(
  url: string,
  headers: Record<string, string>,
  options: OpenSseOptions = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const response = await (options.fetch ?? fetch)(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  async function* items(): AsyncGenerator<SseItem> {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = "";
    let id: string | undefined;
    let event = "";
    let data: string[] = [];
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (;;) {
          const match = /\r\n|\r|\n/.exec(buffer);
          // A CR at the very end may be the first half of a CRLF: wait for more.
          if (!match || (match[0] === "\r" && match.index === buffer.length - 1)) break;
          const line = buffer.slice(0, match.index);
          buffer = buffer.slice(match.index + match[0].length);
          if (line === "") {
            if (data.length > 0) {
              yield { kind: "event", id, event: event || "message", data: data.join("\n") };
            }
            event = "";
            data = [];
            continue;
          }
          if (line.startsWith(":")) {
            yield { kind: "comment", text: line.slice(1).trimStart() };
            continue;
          }
          const colon = line.indexOf(":");
          const field = colon === -1 ? line : line.slice(0, colon);
          let value = colon === -1 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "id") id = value;
          else if (field === "event") event = value;
          else if (field === "data") data.push(value);
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  }
  return { response, items: items(), close: () => abort.abort() };
}
