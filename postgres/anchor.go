package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/agentwarden/warden/audit"
)

// A host anchor is what one host saw of the fleet's chains, kept outside
// the database: for each chain the most rows any of this host's commits
// ended with and the hash of that last row, with a MAC under the fleet's
// key. Verify checks that the database still holds those rows with those
// hashes, which catches what the keyed checkpoints cannot: rows cut from
// the end after the last checkpoint (with that checkpoint), as far as this
// host saw. It is written after each commit (write to a temporary file,
// rename; no fsync), so it can lag the database but never run ahead of it.
type hostAnchor struct {
	path string
	key  []byte
}

// anchorFile is the anchor as stored.
type anchorFile struct {
	audit.Checkpoint
	MAC string `json:"mac"`
}

// advance raises the anchor to what a commit ended with: rows and head of
// the audit chain (rows 0: unchanged) and of the event chain. Each chain
// only moves forward. A failure to write leaves the anchor behind, which is
// safe; it is not an error of the commit.
func (a *hostAnchor) advance(auditRows int64, auditHead string, eventRows int64, eventHead string) {
	lock, err := os.OpenFile(a.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return
	}
	cur, _, err := a.read()
	if err != nil {
		cur = anchorFile{} // damaged: start again from this commit
	}
	ck := cur.Checkpoint
	changed := false
	if auditRows > ck.AuditRows {
		ck.AuditRows, ck.AuditHead, changed = auditRows, auditHead, true
	}
	if eventRows > ck.EventRows {
		ck.EventRows, ck.EventHead, changed = eventRows, eventHead, true
	}
	if !changed {
		return
	}
	b, err := json.Marshal(anchorFile{Checkpoint: ck, MAC: ck.MAC(a.key)})
	if err != nil {
		return
	}
	tmp := a.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	_ = os.Rename(tmp, a.path)
}

// read returns the stored anchor; ok is false when there is none yet.
func (a *hostAnchor) read() (anchorFile, bool, error) {
	var f anchorFile
	b, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, false, fmt.Errorf("the host anchor %s cannot be read: %w", a.path, err)
	}
	return f, true, nil
}
