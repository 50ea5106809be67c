// The "witness" mode: a C2SP tlog-witness of one log, written from the
// specification with golang.org/x/mod/sumdb/note (the checkpoint's
// signature) and golang.org/x/mod/sumdb/tlog (the consistency proof), and
// the cosignature (cosignature/v1, Ed25519, type 0x04) from C2SP
// tlog-cosignature, which those packages do not know. Its state is held in
// memory, under a lock that makes each check-and-store one step.
//
//	WITNESS_KEY=PRIVATE+KEY+<name>+<id>+<base64(0x04 ‖ seed)> log_go witness 127.0.0.1:0 <log vkey>
//
// It prints "listening on http://HOST:PORT" once it listens.
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// witness holds the latest cosigned size and root of one log.
type witness struct {
	mu     sync.Mutex
	c      *cosigner
	v      note.Verifier
	origin string
	size   int64
	root   tlog.Hash
}

func answer(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (wt *witness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const text = "text/plain; charset=utf-8"
	if r.URL.Path != "/add-checkpoint" || r.Method != http.MethodPost {
		answer(w, http.StatusNotFound, text, "not found\n")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	split := bytes.Index(body, []byte("\n\n"))
	if err != nil || split < 0 {
		answer(w, http.StatusBadRequest, text, "malformed\n")
		return
	}
	head := strings.Split(string(body[:split]), "\n")
	old, err := strconv.ParseInt(strings.TrimPrefix(head[0], "old "), 10, 64)
	if err != nil || !strings.HasPrefix(head[0], "old ") || len(head) > 64 {
		answer(w, http.StatusBadRequest, text, "malformed old size\n")
		return
	}
	var proof tlog.TreeProof
	for _, l := range head[1:] {
		h, err := base64.StdEncoding.DecodeString(l)
		if err != nil || len(h) != tlog.HashSize {
			answer(w, http.StatusBadRequest, text, "malformed proof\n")
			return
		}
		var hash tlog.Hash
		copy(hash[:], h)
		proof = append(proof, hash)
	}
	msg := body[split+2:]
	if !bytes.HasPrefix(msg, []byte(wt.origin+"\n")) {
		answer(w, http.StatusNotFound, text, "unknown origin\n")
		return
	}
	n, err := note.Open(msg, note.VerifierList(wt.v))
	if err != nil {
		answer(w, http.StatusForbidden, text, "no valid signature by the log\n")
		return
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		answer(w, http.StatusBadRequest, text, "malformed checkpoint\n")
		return
	}
	size, err1 := strconv.ParseInt(lines[1], 10, 64)
	rootBytes, err2 := base64.StdEncoding.DecodeString(lines[2])
	if err1 != nil || err2 != nil || len(rootBytes) != tlog.HashSize {
		answer(w, http.StatusBadRequest, text, "malformed checkpoint\n")
		return
	}
	var root tlog.Hash
	copy(root[:], rootBytes)
	if old > size {
		answer(w, http.StatusBadRequest, text, "old size above the checkpoint's\n")
		return
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if old != wt.size {
		answer(w, http.StatusConflict, "text/x.tlog.size", fmt.Sprintf("%d\n", wt.size))
		return
	}
	switch {
	case old == 0:
		err = nil
		if len(proof) > 0 {
			err = errors.New("a proof from 0")
		}
	case old == size:
		err = nil
		if root != wt.root || len(proof) > 0 {
			err = errors.New("another root")
		}
	default:
		err = tlog.CheckTree(proof, size, root, old, wt.root)
	}
	if err != nil {
		answer(w, http.StatusUnprocessableEntity, text, "inconsistent\n")
		return
	}
	wt.size, wt.root = size, root
	answer(w, http.StatusOK, text, wt.c.line(n.Text, uint64(time.Now().Unix())))
}

func serveWitness(addr, logKey string) error {
	c, err := newCosigner(os.Getenv("WITNESS_KEY"))
	if err != nil {
		return err
	}
	v, err := note.NewVerifier(logKey)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	return http.Serve(ln, &witness{c: c, v: v, origin: v.Name()})
}
