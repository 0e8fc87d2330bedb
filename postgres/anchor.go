package postgres

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/agentwarden/warden/audit"
	"github.com/agentwarden/warden/internal/regfile"
)

// A host anchor is what one host saw of the fleet's chains, kept outside
// the database: for each chain the most rows any of this host's commits
// ended with and the hash of that last row, with a MAC under the fleet's
// key. Verify checks that the database still holds those rows with those
// hashes, which catches what the keyed checkpoints cannot: rows cut from
// the end after the last checkpoint (with that checkpoint), as far as this
// host saw. It is written after each commit (write to a temporary file,
// rename; no fsync), so it can lag the database but never run ahead of it.
//
// Advancing it never waits on what it finds (its callers are answered after
// it): its files are opened non-blocking (a named pipe in their place is no
// anchor, not something to wait on), and its lock is waited for at most
// anchorLockWait, after which the anchor is left behind.
type hostAnchor struct {
	path string
	key  []byte
}

// anchorLockWait bounds the wait for the anchor's lock, which a commit
// holds for a read and a small write: one held longer belongs to a process
// stopped or stuck. A variable for tests.
var anchorLockWait = 2 * time.Second

// maxAnchorSize bounds what read takes as an anchor: one is about 300
// bytes.
const maxAnchorSize = 64 << 10

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
	lock, _, err := regfile.Open(a.path+".lock", os.O_RDWR|os.O_CREATE, 0o600, true)
	if err != nil {
		return
	}
	defer lock.Close()
	if lockWithin(lock, anchorLockWait) != nil {
		return
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
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
	// A temporary file left by a crash, or anything else in its place (a
	// named pipe would hold the open), is replaced.
	tmp := a.path + ".tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if f.Close() != nil || werr != nil {
		return
	}
	_ = os.Rename(tmp, a.path)
}

// errLockWait is lockWithin's error for a lock still held when the wait
// ended.
var errLockWait = errors.New("the lock is held elsewhere")

// lockWithin takes f's exclusive lock (flock), waiting at most wait: nil,
// errLockWait, or flock's error.
func lockWithin(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		if time.Now().After(deadline) {
			return errLockWait
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// read returns the stored anchor; ok is false when there is none yet.
func (a *hostAnchor) read() (anchorFile, bool, error) {
	var f anchorFile
	file, _, err := regfile.Open(a.path, os.O_RDONLY, 0, true)
	var b []byte
	if err == nil {
		b, err = regfile.ReadAll(file, maxAnchorSize)
		file.Close()
	}
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("the host anchor %s cannot be read: %w", a.path, err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, false, fmt.Errorf("the host anchor %s cannot be read: %w", a.path, err)
	}
	return f, true, nil
}
