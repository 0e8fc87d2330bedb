package audit

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentwarden/warden"
)

// GenesisHash is the PrevHash of the first row of every chain.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// HashEntry returns the chain hash of e when it follows a row whose hash is
// prev: the lower-case hex SHA-256 of prev followed by AppendEntry(e). It ignores
// e.PrevHash and e.Hash.
func HashEntry(prev string, e *warden.AuditEntry) string {
	var buf [1024]byte
	return hashOf(prev, AppendEntry(buf[:0], e))
}

// HashEvent returns the chain hash of ev when it follows a row whose hash is
// prev, as HashEntry does for entries.
func HashEvent(prev string, ev *warden.SecurityEvent) string {
	var buf [512]byte
	return hashOf(prev, AppendEvent(buf[:0], ev))
}

func hashOf(prev string, enc []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(enc)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}
