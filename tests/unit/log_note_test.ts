/**
 * Signed notes and keys as Go's `golang.org/x/mod/sumdb/note` has them: the
 * package's own documented example signs to the same bytes, keys round-trip,
 * unknown signers are ignored, tampering and malformed notes are refused.
 */

import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base64 } from "@scure/base";
import {
  formatSignedNote,
  formatVerifierKey,
  generateNoteKey,
  openNote,
  parseSignedNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from "../../protocol/log/note.ts";

// The example in the documentation of golang.org/x/mod/sumdb/note (note.go).
const GO_SIGNER = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_VERIFIER = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_TEXT = "If you think cryptography is the answer to your problem,\n" +
  "then you don't know what your problem is.\n";
const GO_NOTE = GO_TEXT + "\n" +
  "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

Deno.test("the note package's documented example signs and opens the same", () => {
  const signer = parseSignerKey(GO_SIGNER);
  assert.equal(signer.keyId, 0xc74f20a3);
  assert.equal(signer.verifierKey, GO_VERIFIER);
  assert.equal(signNote(GO_TEXT, [signer]), GO_NOTE);
  const opened = openNote(GO_NOTE, [parseVerifierKey(GO_VERIFIER)]);
  assert.ok(opened.ok);
  assert.equal(opened.text, GO_TEXT);
  assert.deepEqual(opened.verified.map((s) => [s.name, s.keyId]), [["PeterNeumann", 0xc74f20a3]]);
  // Go reads a key id in either case.
  assert.equal(parseVerifierKey(GO_VERIFIER.replace("c74f20a3", "C74F20A3")).keyId, 0xc74f20a3);
});

Deno.test("a signer signs as noble's Ed25519 does (the runtime's signing where it has one)", () => {
  for (let k = 0; k < 8; k++) {
    const { signerKey } = generateNoteKey("example.com/log");
    const seed = base64.decode(signerKey.split("+").slice(4).join("+")).subarray(1);
    const signer = parseSignerKey(signerKey);
    for (const length of [0, 1, 63, 64, 65, 200, 1000]) {
      const text = crypto.getRandomValues(new Uint8Array(length));
      assert.deepEqual(signer.sign(text), ed25519.sign(text, seed), `length ${length}`);
    }
  }
});

Deno.test("generated keys sign notes their verifier keys open", () => {
  const { signerKey, verifierKey } = generateNoteKey("example.com/log");
  assert.match(signerKey, /^PRIVATE\+KEY\+example\.com\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
  assert.match(verifierKey, /^example\.com\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
  const signer = parseSignerKey(signerKey);
  assert.equal(signer.verifierKey, verifierKey);
  const verifier = parseVerifierKey(verifierKey);
  assert.equal(formatVerifierKey(verifier.name, verifier.publicKey), verifierKey);
  // The key's base64 may itself hold "+": everything after the fourth separator.
  const secret = signerKey.split("+").slice(4).join("+");
  assert.equal(JSON.stringify(signer).includes(secret), false);
  const note = signNote("a\nb\n", [signer]);
  assert.ok(openNote(note, [verifier]).ok);
  assert.ok(openNote(new TextEncoder().encode(note), [verifier]).ok);
});

Deno.test("unknown signers are ignored, and a note without a known one is refused", () => {
  const log = generateNoteKey("example.com/log");
  const other = generateNoteKey("example.com/other");
  const note = signNote("text\n", [parseSignerKey(other.signerKey), parseSignerKey(log.signerKey)]);
  const opened = openNote(note, [parseVerifierKey(log.verifierKey)]);
  assert.ok(opened.ok);
  assert.deepEqual(opened.verified.map((s) => s.name), ["example.com/log"]);
  assert.deepEqual(opened.unverified.map((s) => s.name), ["example.com/other"]);
  const none = openNote(note, []);
  assert.equal(none.ok, false);
  assert.equal(!none.ok && none.error, "no_known_signature");
  // Same name, another key: ignored as unknown (the key id differs).
  const impostor = generateNoteKey("example.com/log");
  const forged = signNote("text\n", [parseSignerKey(impostor.signerKey)]);
  const refused = openNote(forged, [parseVerifierKey(log.verifierKey)]);
  assert.equal(!refused.ok && refused.error, "no_known_signature");
});

Deno.test("a tampered note, or a known key's bad signature, is refused", () => {
  const log = generateNoteKey("example.com/log");
  const verifier = parseVerifierKey(log.verifierKey);
  const note = signNote("example.com/log\n5\nroot\n", [parseSignerKey(log.signerKey)]);
  const tampered = note.replace("\n5\n", "\n6\n");
  const opened = openNote(tampered, [verifier]);
  assert.equal(opened.ok, false);
  assert.equal(!opened.ok && opened.error, "invalid_signature");
  // A second, different signature by the same key after a good one is ignored, as Go does.
  const parsed = parseSignedNote(note);
  const bad = { ...parsed.signatures[0], signature: new Uint8Array(64) };
  assert.ok(
    openNote(formatSignedNote({ ...parsed, signatures: [parsed.signatures[0], bad] }), [verifier])
      .ok,
  );
  const first = openNote(formatSignedNote({ ...parsed, signatures: [bad, parsed.signatures[0]] }), [
    verifier,
  ]);
  assert.equal(!first.ok && first.error, "invalid_signature");
});

Deno.test("malformed notes are refused", () => {
  const sig =
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=";
  const malformed = [
    GO_TEXT + sig + "\n", // no empty line
    GO_TEXT + "\n" + sig, // no final newline
    GO_TEXT + "\n", // no signature
    GO_TEXT + "\n" + sig.replace("— ", "-- ") + "\n",
    GO_TEXT + "\n" + sig.replace("— ", "—") + "\n",
    GO_TEXT + "\n" + sig.replace(" x08", " !x08") + "\n",
    GO_TEXT + "\n" + sig.replace("nAM=", "nAM") + "\n", // unpadded
    GO_TEXT + "\n— PeterNeumann AAAAAA==\n", // fewer than 5 bytes
    GO_TEXT + "\n— Peter+Neumann " + sig.split(" ")[2] + "\n",
    GO_TEXT + "\n— PeterNeumann\n",
    GO_TEXT.replace("problem,", "problem,\t") + "\n" + sig + "\n", // a control character
    GO_TEXT.replace("problem,", "problem,\r") + "\n" + sig + "\n",
    GO_TEXT + "\n" + (sig + "\n").repeat(101),
  ];
  for (const note of malformed) {
    assert.throws(() => openNote(note, []), SyntaxError, JSON.stringify(note));
  }
  assert.throws(() => parseSignedNote(new Uint8Array([0xff, 0x0a, 0x0a])), SyntaxError);
  assert.equal(parseSignedNote(GO_TEXT + "\n" + (sig + "\n").repeat(100)).signatures.length, 100);
  // The text may hold empty lines when read; the signatures follow the last one.
  assert.equal(parseSignedNote("a\n\nb\n\n" + sig + "\n").text, "a\n\nb\n");
});

Deno.test("texts that a note cannot carry are not signed", () => {
  const signer = parseSignerKey(GO_SIGNER);
  for (const text of ["no newline", "a\n\nb\n", "\n", "\na\n", "a\tb\n", "a\ud800\n"]) {
    assert.throws(() => signNote(text, [signer]), TypeError, JSON.stringify(text));
  }
  assert.throws(() => formatSignedNote({ text: "a\n", signatures: [] }), TypeError);
});

Deno.test("malformed keys, and keys whose id does not match, are refused", () => {
  const refused = [
    "PeterNeumann+c74f20a3", // no key
    "PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", // 7 digits
    "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", // wrong id
    "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T", // not base64
    "PeterNeumann+c74f20a3+", // empty key
    "PeterNeumann+c74f20a3+" + base64.encode(new Uint8Array([4, ...new Uint8Array(32)])), // type
  ];
  for (const key of refused) assert.throws(() => parseVerifierKey(key), SyntaxError, key);
  assert.throws(() => parseSignerKey(GO_VERIFIER), SyntaxError);
  assert.throws(() => parseSignerKey(GO_SIGNER.replace("c74f20a3", "c74f20a4")), SyntaxError);
  assert.throws(() => parseSignerKey(GO_SIGNER.replace("PRIVATE", "private")), SyntaxError);
  assert.throws(() => parseVerifierKey(GO_SIGNER), SyntaxError);
  assert.throws(() => generateNoteKey("a b"), TypeError);
  assert.throws(() => generateNoteKey("a+b"), TypeError);
  assert.throws(() => generateNoteKey(""), TypeError);
  assert.throws(() => generateNoteKey("a\u3000b"), TypeError);
});
