// Command log_go checks the verifiable log's formats with Go's own
// golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog packages, an
// implementation independent of the service's (see README.md).
//
//	log_go fixtures > tests/fixtures/log/go_fixtures.json
//	log_go check < what-the-service-wrote.json
//	WITNESS_KEY=… log_go witness ADDR VKEY
//
// "fixtures" writes a key pair, a signed checkpoint, tree roots, proofs and
// tile digests that Go computed; "check" reads what the service's modules
// wrote and verifies it with note.Open, tlog.CheckRecord, tlog.CheckTree and
// tlog.ReadTileData, and exits 1 naming every check that failed; "witness"
// serves C2SP tlog-witness's add-checkpoint for one log (witness.go).
//
// The entries are the log's (docs/interface.md §14) for the records
// {"id":"<i>","state":"accepted"} of type intent.accepted, whose JCS text is
// what encoding/json writes for them (sorted keys, ASCII only).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const origin = "example.com/log"

// given holds the entries a check was handed (its input's "entries"), if any.
var given [][]byte

// entry is the log's entry for the i-th test record, or the i-th entry given.
func entry(i int64) []byte {
	if given != nil {
		return given[i]
	}
	record, _ := json.Marshal(map[string]string{"id": strconv.FormatInt(i, 10), "state": "accepted"})
	sum := sha256.Sum256(record)
	out, _ := json.Marshal(map[string]string{
		"record_sha256": base64.RawURLEncoding.EncodeToString(sum[:]),
		"type":          "intent.accepted",
	})
	return out
}

// hashStore is an in-memory tlog.HashReader over the stored hashes of n entries.
type hashStore []tlog.Hash

func (s hashStore) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(s)) {
			return nil, fmt.Errorf("no stored hash %d", x)
		}
		out[i] = s[x]
	}
	return out, nil
}

func build(n int64) hashStore {
	var s hashStore
	for i := int64(0); i < n; i++ {
		hashes, err := tlog.StoredHashes(i, entry(i), s)
		if err != nil {
			panic(err)
		}
		s = append(s, hashes...)
	}
	return s
}

// c2spPath is Go's tile path without the height element (tile/8/L/N → tile/L/N).
func c2spPath(t tlog.Tile) string {
	return strings.Replace(t.Path(), "tile/8/", "tile/", 1)
}

func hashes(p []tlog.Hash) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = h.String()
	}
	return out
}

type proofCase struct {
	Size  int64    `json:"size"`
	Index int64    `json:"index"`
	Proof []string `json:"proof"`
}

type treeCase struct {
	Old   int64    `json:"old"`
	New   int64    `json:"new"`
	Proof []string `json:"proof"`
}

type tileCase struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256,omitempty"`
	Data   string `json:"data,omitempty"`
}

type fixtures struct {
	Command          string            `json:"command"`
	Origin           string            `json:"origin"`
	SignerKey        string            `json:"signer_key"`
	VerifierKey      string            `json:"verifier_key"`
	Entries          []string          `json:"entries"`
	SignedCheckpoint string            `json:"signed_checkpoint"`
	Roots            map[string]string `json:"roots"`
	Inclusion        []proofCase       `json:"inclusion"`
	Consistency      []treeCase        `json:"consistency"`
	Tiles            []tileCase        `json:"tiles"`
}

const maxSize = 70000

func makeFixtures() error {
	seed := sha256.Sum256([]byte("log_go fixture key"))
	skey, vkey, err := note.GenerateKey(bytes.NewReader(seed[:]), origin)
	if err != nil {
		return err
	}
	store := build(maxSize)
	root := func(n int64) tlog.Hash {
		h, err := tlog.TreeHash(n, store)
		if err != nil {
			panic(err)
		}
		return h
	}
	f := fixtures{
		Command:     "GOPATH=/usr/share/gocode GO111MODULE=off go run ./testing/log_go fixtures > tests/fixtures/log/go_fixtures.json",
		Origin:      origin,
		SignerKey:   skey,
		VerifierKey: vkey,
		Roots:       map[string]string{},
	}
	for i := int64(0); i < 3; i++ {
		f.Entries = append(f.Entries, string(entry(i)))
	}
	sizes := []int64{}
	for n := int64(1); n <= 300; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 511, 512, 513, 1000, 65535, 65536, 65537, maxSize)
	for _, n := range sizes {
		f.Roots[strconv.FormatInt(n, 10)] = root(n).String()
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return err
	}
	text := tlog.FormatTree(tlog.Tree{N: maxSize, Hash: root(maxSize)})
	// A checkpoint's first line is the origin (tlog.FormatTree writes sumdb's own header).
	body := origin + "\n" + strings.SplitN(string(text), "\n", 2)[1]
	msg, err := note.Sign(&note.Note{Text: body}, signer)
	if err != nil {
		return err
	}
	f.SignedCheckpoint = string(msg)
	for _, n := range []int64{1, 2, 3, 7, 8, 255, 256, 257, 1000, 65535, 65536, 65537, maxSize} {
		for _, i := range []int64{0, n / 2, n - 1, 255, 256, 65536} {
			if i >= n {
				continue
			}
			p, err := tlog.ProveRecord(n, i, store)
			if err != nil {
				return err
			}
			f.Inclusion = append(f.Inclusion, proofCase{Size: n, Index: i, Proof: hashes(p)})
		}
		for _, m := range []int64{1, 3, 8, 255, 256, 257, 1000, 65536, n} {
			if m > n {
				continue
			}
			p, err := tlog.ProveTree(n, m, store)
			if err != nil {
				return err
			}
			f.Consistency = append(f.Consistency, treeCase{Old: m, New: n, Proof: hashes(p)})
		}
	}
	for _, t := range tlog.NewTiles(8, 0, maxSize) {
		data, err := tlog.ReadTileData(t, store)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		f.Tiles = append(f.Tiles, tileCase{Path: c2spPath(t), SHA256: hex.EncodeToString(sum[:])})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

type checkInput struct {
	VerifierKey      string      `json:"verifier_key"`
	CosignerKeys     []string    `json:"cosigner_keys"`
	Size             int64       `json:"size"`
	SignedCheckpoint string      `json:"signed_checkpoint"`
	Inclusion        []proofCase `json:"inclusion"`
	Consistency      []treeCase  `json:"consistency"`
	Tiles            []tileCase  `json:"tiles"`
	Bundles          []tileCase  `json:"bundles"`
	TlogProofs       []string    `json:"tlog_proofs"`
	// Origin and Entries, when given, replace the test origin and records:
	// what a running log served (base64 of each entry, in order).
	Origin  string   `json:"origin"`
	Entries []string `json:"entries"`
}

func check() error {
	var in checkInput
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return err
	}
	wantOrigin := origin
	if in.Origin != "" {
		wantOrigin = in.Origin
	}
	if in.Entries != nil {
		given = make([][]byte, len(in.Entries))
		for i, e := range in.Entries {
			b, err := base64.StdEncoding.DecodeString(e)
			if err != nil {
				return fmt.Errorf("entry %d: %v", i, err)
			}
			given[i] = b
		}
		if int64(len(given)) < in.Size {
			return fmt.Errorf("%d entries given for a tree of %d", len(given), in.Size)
		}
	}
	store := build(in.Size)
	var failures []string
	fail := func(format string, args ...interface{}) {
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	root := func(n int64) tlog.Hash {
		h, err := tlog.TreeHash(n, store)
		if err != nil {
			panic(err)
		}
		return h
	}
	logKey, err := note.NewVerifier(in.VerifierKey)
	if err != nil {
		return fmt.Errorf("note.NewVerifier: %v", err)
	}
	checked := 0
	openCheckpoint := func(what, msg string) (tlog.Tree, bool) {
		checked++
		n, err := note.Open([]byte(msg), note.VerifierList(logKey))
		if err != nil {
			fail("%s: note.Open: %v", what, err)
			return tlog.Tree{}, false
		}
		if len(n.UnverifiedSigs) != len(in.CosignerKeys) {
			fail("%s: %d unverified signatures, not %d", what, len(n.UnverifiedSigs), len(in.CosignerKeys))
		}
		lines := strings.SplitN(n.Text, "\n", 2)
		if lines[0] != wantOrigin {
			fail("%s: origin %q", what, lines[0])
			return tlog.Tree{}, false
		}
		tree, err := tlog.ParseTree([]byte("go.sum database tree\n" + lines[1]))
		if err != nil {
			fail("%s: tlog.ParseTree: %v", what, err)
			return tlog.Tree{}, false
		}
		if tree.Hash != root(tree.N) {
			fail("%s: root of size %d differs from tlog.TreeHash", what, tree.N)
		}
		list := []note.Verifier{logKey}
		for _, k := range in.CosignerKeys {
			v, err := newCosigVerifier(k)
			if err != nil {
				fail("%s: %v", k, err)
				continue
			}
			list = append(list, v)
		}
		if n, err := note.Open([]byte(msg), note.VerifierList(list...)); err != nil {
			fail("%s: note.Open with the cosigners: %v", what, err)
		} else if len(n.Sigs) != len(list) {
			fail("%s: %d verified signatures, not %d", what, len(n.Sigs), len(list))
		}
		return tree, true
	}
	openCheckpoint("signed checkpoint", in.SignedCheckpoint)
	for _, c := range in.Inclusion {
		checked++
		p, err := parseHashes(c.Proof)
		if err == nil {
			err = tlog.CheckRecord(p, c.Size, root(c.Size), c.Index, tlog.RecordHash(entry(c.Index)))
		}
		if err != nil {
			fail("inclusion of %d in %d: %v", c.Index, c.Size, err)
		}
	}
	for _, c := range in.Consistency {
		checked++
		p, err := parseHashes(c.Proof)
		if err == nil {
			err = tlog.CheckTree(p, c.New, root(c.New), c.Old, root(c.Old))
		}
		if err != nil {
			fail("consistency of %d with %d: %v", c.New, c.Old, err)
		}
	}
	for _, c := range in.Tiles {
		checked++
		t, err := tlog.ParseTilePath(strings.Replace(c.Path, "tile/", "tile/8/", 1))
		if err != nil {
			fail("%s: %v", c.Path, err)
			continue
		}
		want, err := tlog.ReadTileData(t, store)
		got, _ := base64.StdEncoding.DecodeString(c.Data)
		if err != nil || !bytes.Equal(want, got) {
			fail("%s: not the tile tlog.ReadTileData reads (%v)", c.Path, err)
		}
	}
	for _, c := range in.Bundles {
		checked++
		t, err := tlog.ParseTilePath(strings.Replace(c.Path, "tile/entries/", "tile/8/0/", 1))
		if err != nil {
			fail("%s: %v", c.Path, err)
			continue
		}
		var want []byte
		for i := t.N * 256; i < t.N*256+int64(t.W); i++ {
			e := entry(i)
			want = append(want, byte(len(e)>>8), byte(len(e)))
			want = append(want, e...)
		}
		got, _ := base64.StdEncoding.DecodeString(c.Data)
		if !bytes.Equal(want, got) {
			fail("%s: not the entries' bundle", c.Path)
		}
	}
	for i, text := range in.TlogProofs {
		if err := checkTlogProof(text, openCheckpoint); err != nil {
			fail("tlog proof %d: %v", i, err)
		}
	}
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "\n"))
	}
	fmt.Printf("{\"ok\":true,\"checked\":%d}\n", checked)
	return nil
}

// checkTlogProof reads a c2sp.org/tlog-proof@v1 proof of one of the test entries.
func checkTlogProof(text string, open func(string, string) (tlog.Tree, bool)) error {
	head, checkpoint, found := strings.Cut(text, "\n\n")
	if !found {
		return errors.New("no empty line")
	}
	lines := strings.Split(head, "\n")
	if len(lines) < 2 || lines[0] != "c2sp.org/tlog-proof@v1" || !strings.HasPrefix(lines[1], "index ") {
		return errors.New("malformed header")
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(lines[1], "index "), 10, 64)
	if err != nil {
		return err
	}
	p, err := parseHashes(lines[2:])
	if err != nil {
		return err
	}
	tree, ok := open("tlog proof checkpoint", checkpoint)
	if !ok {
		return errors.New("its checkpoint does not open")
	}
	return tlog.CheckRecord(p, tree.N, tree.Hash, index, tlog.RecordHash(entry(index)))
}

func parseHashes(list []string) (p []tlog.Hash, err error) {
	for _, s := range list {
		h, err := tlog.ParseHash(s)
		if err != nil {
			return nil, err
		}
		p = append(p, h)
	}
	return p, nil
}

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "fixtures":
		err = makeFixtures()
	case len(os.Args) == 2 && os.Args[1] == "check":
		err = check()
	case len(os.Args) == 4 && os.Args[1] == "witness":
		err = serveWitness(os.Args[2], os.Args[3])
	default:
		err = errors.New("usage: log_go fixtures | log_go check < input.json | log_go witness ADDR VKEY")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
