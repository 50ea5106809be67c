// An HTTPS webhook receiver for `deno task webhooks-load -- --https`, run by Node, whose https
// server sets TCP_NODELAY as production servers do (Deno.serve's TLS connections leave Nagle's
// algorithm on, which stalls a fresh connection's answer for a delayed ACK: 40 ms on Linux).
// Usage: node _https_receiver.mjs CERT_FILE KEY_FILE. Prints "listening PORT", then one line per
// delivery: "EVENT_ID INTENT_ID ARRIVAL_MS" (epoch milliseconds, fractional), answering 204.
import { createServer } from "node:https";
import { readFileSync } from "node:fs";

const [cert, key] = process.argv.slice(2).map((file) => readFileSync(file));
const server = createServer({ cert, key, noDelay: true }, (request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    const event = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    process.stdout.write(`${event.id} ${event.record.id} ${at}\n`);
    response.writeHead(204);
    response.end();
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${server.address().port}\n`));
