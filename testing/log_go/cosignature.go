// C2SP tlog-cosignature v1 (Ed25519, signature type 0x04), written here from
// the specification: golang.org/x/mod/sumdb/note has no such type. The
// verifier checks the cosignatures "check" is given; the cosigner signs
// what the "witness" mode answers.
package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// cosigVerifier verifies C2SP tlog-cosignature v1 (Ed25519, type 0x04)
// signatures, written here from the specification: note has no such type.
type cosigVerifier struct {
	name string
	hash uint32
	key  ed25519.PublicKey
}

func (v *cosigVerifier) Name() string    { return v.name }
func (v *cosigVerifier) KeyHash() uint32 { return v.hash }
func (v *cosigVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != 8+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > 1<<63-1 {
		return false
	}
	m := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), msg...)
	return ed25519.Verify(v.key, m, sig[8:])
}

func newCosigVerifier(vkey string) (*cosigVerifier, error) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 || len(parts[1]) != 8 {
		return nil, errors.New("malformed cosigner key")
	}
	hash, err1 := strconv.ParseUint(parts[1], 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || len(key) != 33 || key[0] != 0x04 {
		return nil, errors.New("malformed cosigner key")
	}
	h := sha256.Sum256(append([]byte(parts[0]+"\n"), key...))
	if binary.BigEndian.Uint32(h[:]) != uint32(hash) {
		return nil, errors.New("cosigner key id does not match")
	}
	return &cosigVerifier{name: parts[0], hash: uint32(hash), key: key[1:]}, nil
}

// cosigner makes cosignature/v1 signatures with one Ed25519 key.
type cosigner struct {
	name string
	hash uint32
	key  ed25519.PrivateKey
}

func newCosigner(skey string) (*cosigner, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 || parts[0] != "PRIVATE" || parts[1] != "KEY" || len(parts[3]) != 8 {
		return nil, errors.New("malformed cosigner signer key")
	}
	hash, err1 := strconv.ParseUint(parts[3], 16, 32)
	key, err2 := base64.StdEncoding.DecodeString(parts[4])
	if err1 != nil || err2 != nil || len(key) != 33 || key[0] != 0x04 {
		return nil, errors.New("malformed cosigner signer key")
	}
	priv := ed25519.NewKeyFromSeed(key[1:])
	pub := priv.Public().(ed25519.PublicKey)
	h := sha256.Sum256(append([]byte(parts[2]+"\n\x04"), pub...))
	if binary.BigEndian.Uint32(h[:]) != uint32(hash) {
		return nil, errors.New("cosigner key id does not match")
	}
	return &cosigner{name: parts[2], hash: uint32(hash), key: priv}, nil
}

// line is the signature line of the cosignature of text at time t.
func (c *cosigner) line(text string, t uint64) string {
	msg := append([]byte(fmt.Sprintf("cosignature/v1\ntime %d\n", t)), text...)
	sig := make([]byte, 4+8+ed25519.SignatureSize)
	binary.BigEndian.PutUint32(sig, c.hash)
	binary.BigEndian.PutUint64(sig[4:], t)
	copy(sig[12:], ed25519.Sign(c.key, msg))
	return "— " + c.name + " " + base64.StdEncoding.EncodeToString(sig) + "\n"
}
