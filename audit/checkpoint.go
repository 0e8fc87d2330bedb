package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// CheckpointEncoding opens the bytes a checkpoint's MAC covers, so a MAC
// over a checkpoint can never be taken for a MAC over anything else.
const CheckpointEncoding = "warden.audit_checkpoint.v1"

// KeySize is the size in bytes of a checkpoint key.
const KeySize = 32

// A Checkpoint says where both chains stood at one moment: how many rows
// each held and the hash of its last row (GenesisHash for an empty chain).
// Keyed with a MAC (Checkpoint.MAC) by a key the agent cannot read, it is
// what makes a rewritten chain evident: whoever rewrites a row and
// recomputes every later hash with warden's own code ends with a chain that
// verifies by itself but no longer passes through the checkpoints taken
// before the rewrite, and cannot forge new ones without the key.
//
// The zero value is the checkpoint of two empty chains with empty heads,
// which no store writes: a store's empty chain has GenesisHash as head.
type Checkpoint struct {
	AuditRows int64  `json:"audit_rows"`
	AuditHead string `json:"audit_head"`
	EventRows int64  `json:"event_rows"`
	EventHead string `json:"event_head"`
}

// Total is the number of rows both chains held: a checkpoint with a larger
// total was taken later.
func (c Checkpoint) Total() int64 { return c.AuditRows + c.EventRows }

// MAC returns the lower-case hex HMAC-SHA256, keyed by key, of c's canonical
// encoding: CheckpointEncoding, then each count as 8 bytes big-endian and
// each head as its 64 hex digits, in field order.
func (c Checkpoint) MAC(key []byte) string {
	m := hmac.New(sha256.New, key)
	var b [len(CheckpointEncoding) + 2*(8+64)]byte
	m.Write(c.appendEncoding(b[:0]))
	var sum [sha256.Size]byte
	return hex.EncodeToString(m.Sum(sum[:0]))
}

// Authentic reports whether mac is c's MAC under key, in constant time.
func (c Checkpoint) Authentic(key []byte, mac string) bool {
	got, err := hex.DecodeString(mac)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	want, _ := hex.DecodeString(c.MAC(key))
	return hmac.Equal(got, want)
}

func (c Checkpoint) appendEncoding(b []byte) []byte {
	b = append(b, CheckpointEncoding...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.AuditRows))
	b = append(b, c.AuditHead...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.EventRows))
	return append(b, c.EventHead...)
}

// NewKey returns a fresh random checkpoint key.
func NewKey() ([]byte, error) {
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("new checkpoint key: %w", err)
	}
	return k, nil
}

// EncodeKey returns the text a key file holds: the key in hex and a newline.
func EncodeKey(key []byte) []byte { return []byte(hex.EncodeToString(key) + "\n") }

// DecodeKey reads a key file's text. Its error never contains the key.
func DecodeKey(b []byte) ([]byte, error) {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	k := make([]byte, hex.DecodedLen(len(b)))
	if _, err := hex.Decode(k, b); err != nil || len(k) != KeySize {
		return nil, errors.New("not a checkpoint key: want 64 hex digits and a newline")
	}
	return k, nil
}
