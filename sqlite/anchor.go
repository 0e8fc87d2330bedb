package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/agentwarden/warden/internal/regfile"
)

// Options adjust OpenWith and OpenDeferredWith. The zero value is a bare
// store: it creates its database when missing and keeps no anchor, so it
// cannot tell a deleted, cut-short or replaced database from a new one.
// Warden's home always opens its store with Anchor and Key set.
type Options struct {
	// Anchor is the chain anchor file (see anchorfile.go); "" keeps none.
	Anchor string
	// Key is the checkpoint key file (mode 0600): the key of the MACs over
	// the anchor and the chain checkpoints. Required with Anchor.
	Key string
	// Create lets the store create a missing database, and the anchor and
	// the key, when there is no anchor: a new home (`warden init`). A home
	// whose anchor says rows were recorded is never given a fresh database
	// this way; see Recover.
	Create bool
	// Inspect opens the store for Verify: what the anchor recorded that is
	// missing or different is reported by Verify instead of refusing to
	// open, and then nothing is written (no migration, no drain).
	Inspect bool
	// LongLived stores (the daemon) also take a checkpoint when they close.
	LongLived bool
}

// CheckpointEvery is how many rows of a chain separate two keyed
// checkpoints stored in the database; the anchor holds one after every
// commit.
const CheckpointEvery = 100

// ErrLost is the cause of every refusal to use a home whose anchor records
// what the database or the spool no longer holds.
var ErrLost = errors.New("the audit log no longer holds what its anchor recorded")

// schemaV7 adds the keyed checkpoints of both chains (see CheckpointEvery).
var schemaV7 = `
CREATE TABLE chain_checkpoints (
	seq        INTEGER PRIMARY KEY,     -- 1, 2, 3… without gaps
	created_at INTEGER NOT NULL,        -- Unix milliseconds, UTC
	audit_rows INTEGER NOT NULL CHECK (audit_rows >= 0),
	audit_head TEXT    NOT NULL,
	event_rows INTEGER NOT NULL CHECK (event_rows >= 0),
	event_head TEXT    NOT NULL,
	mac        TEXT    NOT NULL         -- hex HMAC-SHA256 (audit.Checkpoint.MAC)
) STRICT;
` + appendOnly("chain_checkpoints", "seq = NEW.seq")

const (
	sqlInsertCheckpoint = `INSERT INTO chain_checkpoints (seq, created_at, audit_rows, audit_head, event_rows, event_head, mac)
	VALUES ((SELECT ifnull(max(seq), 0) + 1 FROM chain_checkpoints), ?, ?, ?, ?, ?, ?)`
	sqlLastCheckpoint = `SELECT audit_rows, event_rows FROM chain_checkpoints ORDER BY seq DESC LIMIT 1`
	sqlAuditHashAt    = `SELECT hash FROM audit WHERE seq = ?`
	sqlEventHashAt    = `SELECT hash FROM security_events WHERE seq = ?`
)

// findings is what a check of the home found: what the anchor recorded that
// is missing (one sentence each), and the first row that differs from it.
type findings struct {
	missing []string
	brk     *warden.ChainBreak
}

func (f *findings) empty() bool { return f == nil || len(f.missing) == 0 && f.brk == nil }

func (f *findings) miss(format string, args ...any) {
	f.missing = append(f.missing, fmt.Sprintf(format, args...))
}

// breakAt keeps the first row that differs: the earliest of a chain.
func (f *findings) breakAt(table string, seq int64, why string) {
	if f.brk == nil || f.brk.Table == table && seq < f.brk.Seq {
		f.brk = &warden.ChainBreak{Table: table, Seq: seq, Why: why}
	}
}

// summary is one sentence for an error message.
func (f *findings) summary() string {
	var parts []string
	parts = append(parts, f.missing...)
	if f.brk != nil {
		parts = append(parts, fmt.Sprintf("%s row %d: %s", f.brk.Table, f.brk.Seq, f.brk.Why))
	}
	return strings.Join(parts, "; ")
}

// lostError is the error a home in that state gets.
func lostError(f *findings) *warden.Error {
	return warden.Errorf(warden.EConflict, "the audit log is not what this home recorded: %s", f.summary()).Wrap(ErrLost).
		WithHint("nothing is decided until this is resolved; `warden audit verify` says what is missing, and " +
			"`warden audit recover --yes` keeps what is left aside and starts a new chain that records the loss")
}

// loadKey reads the checkpoint key, refusing a key file others may read
// and one that is not a regular file (a named pipe is refused, not waited
// on). A missing file is (nil, nil).
func loadKey(path string) ([]byte, error) {
	f, fi, err := regfile.Open(path, os.O_RDONLY, 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, notRegular("the checkpoint key", nr, damagedKeyHint(path))
	}
	if err != nil {
		return nil, fmt.Errorf("open the checkpoint key %s: %w", path, err)
	}
	defer f.Close()
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, warden.Errorf(warden.EConflict, "the checkpoint key %s may be read by others (mode %04o)", path, fi.Mode().Perm()).
			WithHint("chmod 600 " + path)
	}
	b := make([]byte, 2*audit.KeySize+2)
	n, _ := f.Read(b)
	k, err := audit.DecodeKey(b[:n])
	if err != nil {
		return nil, warden.Errorf(warden.EConflict, "the checkpoint key %s is damaged (%v)", path, err).Wrap(err).
			WithHint(damagedKeyHint(path))
	}
	return k, nil
}

// damagedKeyHint is what to do about a checkpoint key that cannot be read.
func damagedKeyHint(path string) string {
	return "restore it from a backup of warden's home; if it is lost, move it aside (mv " + path + " " + path + ".damaged) and run `warden audit recover --yes`, which starts a new chain that records the loss"
}

// createKey writes a fresh key to path (mode 0600), durably, failing if a
// file is there.
func createKey(path string) ([]byte, error) {
	k, err := audit.NewKey()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the checkpoint key %s: %w", path, err)
	}
	_, werr := f.Write(audit.EncodeKey(k))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("write the checkpoint key %s: %w", path, err)
	}
	return k, nil
}

// chainState reads both chains' heads as a checkpoint.
func chainState(c *conn) (audit.Checkpoint, error) {
	var ck audit.Checkpoint
	var err error
	if ck.AuditRows, ck.AuditHead, err = head(c, sqlAuditHead); err != nil {
		return ck, err
	}
	ck.EventRows, ck.EventHead, err = head(c, sqlEventHead)
	return ck, err
}

// hashAt returns the hash of row seq of a chain (GenesisHash for row 0),
// and false when there is no such row.
func hashAt(c *conn, query string, seq int64) (string, bool, error) {
	if seq == 0 {
		return audit.GenesisHash, true, nil
	}
	st, err := c.prepare(query)
	if err != nil {
		return "", false, err
	}
	defer st.Reset()
	if err := st.BindInt64(1, seq); err != nil {
		return "", false, err
	}
	if !st.Step() {
		return "", false, st.Err()
	}
	return st.ColumnText(0), true, nil
}

// checkAgainst compares the chains in c with a checkpoint ck that they must
// pass through (what names it: "the anchor", "checkpoint 3"), adding what
// is missing or different to f.
func checkAgainst(c *conn, ck audit.Checkpoint, what string, f *findings) error {
	for _, ch := range []struct {
		table, noun, headQuery, hashQuery string
		rows                              int64
		head                              string
	}{
		{audit.TableAudit, "audit rows", sqlAuditHead, sqlAuditHashAt, ck.AuditRows, ck.AuditHead},
		{audit.TableEvents, "security events", sqlEventHead, sqlEventHashAt, ck.EventRows, ck.EventHead},
	} {
		have, _, err := head(c, ch.headQuery)
		if err != nil {
			return err
		}
		if have < ch.rows {
			f.miss("%s %d to %d (%s recorded %d, the database holds %d)", ch.noun, have+1, ch.rows, what, ch.rows, have)
			continue
		}
		h, _, err := hashAt(c, ch.hashQuery, ch.rows)
		if err != nil {
			return err
		}
		if h != ch.head {
			f.breakAt(ch.table, ch.rows, fmt.Sprintf("the row's hash differs from the one %s recorded for it: the database was replaced, or its rows up to here were rewritten", what))
		}
	}
	return nil
}

// checkHomeLocked compares the database on s.w (or its absence, when
// dbMissing) with the anchor, before anything is written, and loads the
// key. have says whether the anchor holds a record. s.mu must be held.
func (s *Store) checkHomeLocked(dbMissing bool) (f *findings, have bool, err error) {
	f = &findings{}
	a, err := openAnchor(s.opt.Anchor, false)
	if err != nil {
		return nil, false, err
	}
	if a != nil {
		s.anchor = a
	}
	key, err := loadKey(s.opt.Key)
	if err != nil {
		return nil, false, err
	}
	s.key = key
	var st anchorState
	var damaged bool
	if a != nil {
		if st, have, damaged, err = a.readDB(); err != nil {
			return nil, false, err
		}
	}
	switch {
	case damaged:
		f.miss("the chain anchor %s (neither of its records is intact: damaged or forged)", s.opt.Anchor)
		return f, false, nil
	case have && key == nil:
		f.miss("the checkpoint key %s (the anchor's MAC cannot be checked without it)", s.opt.Key)
		return f, true, nil
	case have && !st.Authentic(key, st.MAC):
		f.miss("a genuine chain anchor: %s does not carry a valid MAC under this home's key (forged, or the key was replaced)", s.opt.Anchor)
		return f, true, nil
	case have && dbMissing:
		f.miss("the database %s%s (the anchor recorded %d audit rows and %d security events)", s.path, s.unreadableNote(), st.AuditRows, st.EventRows)
		s.lastAnchor = st
		return f, true, nil
	case have:
		s.lastAnchor = st
		return f, true, checkAgainst(s.w, st.Checkpoint, "the anchor", f)
	case dbMissing:
		if !s.opt.Create || s.unreadable != nil {
			f.miss("the database %s%s (and no chain anchor says what it held: `warden init` creates a new home's)", s.path, s.unreadableNote())
		}
		return f, false, nil
	}
	// A database and no anchor: a home from before anchors, if nothing in
	// it says it had one.
	n, err := countCheckpoints(s.w)
	if err != nil {
		return nil, false, err
	}
	if key != nil || n > 0 {
		f.miss("the chain anchor %s (the home has a checkpoint key or checkpoints, so it had one)", s.opt.Anchor)
	}
	return f, false, nil
}

// unreadableNote says why a database file that exists counts as missing:
// SQLite cannot read it. Empty when it is missing or merely empty.
func (s *Store) unreadableNote() string {
	if s.unreadable == nil {
		return ""
	}
	return fmt.Sprintf(", which is there but SQLite cannot read (%v)", s.unreadable)
}

// countCheckpoints counts the stored checkpoints; a database from before
// them has none.
func countCheckpoints(c *conn) (int64, error) {
	v, err := userVersion(c.c)
	if err != nil || v < 7 {
		return 0, err
	}
	var n int64
	err = query(c, `SELECT count(*) FROM chain_checkpoints`, nil, func(st *sqlite3.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	})
	return n, err
}

// How a home came to be anchored by anchorNewLocked.
const (
	anchorNew       = iota // a new home: no database, no key
	anchorUpgraded         // a database from before anchors
	anchorRecreated        // no database and no anchor, but a key: `warden init` again
)

// anchorNewLocked sets up the anchor of a home that has none: the key
// (created if missing), the anchor file, a checkpoint of the chains as
// they are, and for anything but a new home a security event saying so.
// s.mu must be held, s.w open.
func (s *Store) anchorNewLocked(ctx context.Context, how int) error {
	if s.key == nil {
		k, err := createKey(s.opt.Key)
		if err != nil {
			return err
		}
		s.key = k
	}
	if s.anchor == nil {
		a, err := openAnchor(s.opt.Anchor, true)
		if err != nil {
			return err
		}
		s.anchor = a
	}
	if s.recovery != nil {
		if err := s.insertRecoveryLocked(ctx); err != nil {
			return err
		}
	} else if how != anchorNew {
		ck, err := chainState(s.w)
		if err != nil {
			return err
		}
		meta, _ := json.Marshal(map[string]any{"anchor": s.opt.Anchor, "audit_rows": ck.AuditRows, "event_rows": ck.EventRows})
		summary := fmt.Sprintf("the audit log had no chain anchor (a home from before anchors); it is anchored from here, at %d audit rows and %d security events, which are taken as they are", ck.AuditRows, ck.EventRows)
		if how == anchorRecreated {
			summary = "a new audit database was created in a home that had a checkpoint key but neither a database nor a chain anchor: an earlier audit log and its anchor are gone"
		}
		ev := &warden.SecurityEvent{ID: uuid.NewString(), CreatedAt: audit.Timestamp(s.now()), Type: warden.EventAuditAnchored, Severity: warden.SevWarn,
			Summary: summary, Metadata: meta}
		if err := s.txLocked(ctx, func(w *conn) error { return insertEvent(w, ev) }); err != nil {
			return err
		}
	}
	if err := s.checkpointLocked(ctx); err != nil {
		return err
	}
	if err := s.anchor.writeSpool(spoolClaim{}, false); err != nil {
		return err
	}
	return s.anchor.sync()
}

// checkpointLocked stores a keyed checkpoint of both chains now, unless
// the last one is of the same rows. s.mu must be held, s.w open.
func (s *Store) checkpointLocked(ctx context.Context) error {
	return s.txLocked(ctx, func(w *conn) error {
		ck, err := chainState(w)
		if err != nil {
			return err
		}
		if ck.AuditRows == s.ckAudit && ck.EventRows == s.ckEvent && s.ckStored {
			return nil
		}
		return s.insertCheckpoint(w, ck)
	})
}

func (s *Store) insertCheckpoint(w *conn, ck audit.Checkpoint) error {
	st, err := w.prepare(sqlInsertCheckpoint)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.int(audit.Timestamp(s.now()).UnixMilli())
	b.int(ck.AuditRows)
	b.text(ck.AuditHead)
	b.int(ck.EventRows)
	b.text(ck.EventHead)
	b.text(ck.MAC(s.key))
	if err := b.exec(); err != nil {
		return fmt.Errorf("insert chain checkpoint: %w", err)
	}
	w.ck = &ck
	return nil
}

// sealLocked runs inside every write transaction once fn succeeded: it
// reads the chains' heads for the anchor, and stores a keyed checkpoint
// when a chain has passed a multiple of CheckpointEvery since the last
// one. s.mu must be held.
func (s *Store) sealLocked(w *conn) (*anchorState, error) {
	if s.anchor == nil || s.key == nil {
		return nil, nil
	}
	ck, err := chainState(w)
	if err != nil {
		return nil, err
	}
	if ck.AuditRows/CheckpointEvery > s.ckAudit/CheckpointEvery || ck.EventRows/CheckpointEvery > s.ckEvent/CheckpointEvery {
		if err := s.insertCheckpoint(w, ck); err != nil {
			return nil, err
		}
	}
	st := &anchorState{Checkpoint: ck, MAC: ck.MAC(s.key), Dev: s.dev, Ino: s.ino}
	return st, nil
}

// anchorLocked writes st into the anchor after its commit. A failed write
// leaves the anchor behind, which is safe; Verify reports it.
func (s *Store) anchorLocked(st *anchorState) {
	if st == nil || *st == s.lastAnchor {
		return
	}
	if err := s.anchor.writeDB(*st); err != nil {
		s.anchorErr = err
		return
	}
	s.lastAnchor = *st
}

// checkFileLocked makes sure the database file at the path is still the one
// s.w has open: a file deleted or replaced under a running process would
// otherwise take every later decision with it. s.mu must be held.
func (s *Store) checkFileLocked() error {
	if s.broken != nil {
		return s.broken
	}
	if s.anchor == nil || s.opt.Inspect || s.w == nil {
		return nil
	}
	fi, err := os.Stat(s.path)
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "deleted"
	case err != nil:
		why = "made unreachable (" + err.Error() + ")"
	default:
		if dev, ino := fileID(fi); dev != s.dev || ino != s.ino {
			why = "replaced by another file"
		}
	}
	if why == "" {
		return nil
	}
	f := &findings{}
	f.miss("the database %s, which was %s while warden had it open (the anchor recorded %d audit rows and %d security events)",
		s.path, why, s.lastAnchor.AuditRows, s.lastAnchor.EventRows)
	s.fail(f)
	return s.broken
}

// fail makes the store refuse everything from now on, and records a
// critical security event in the spool, which survives the database and
// enters the new chain when the home is recovered. s.mu must be held.
func (s *Store) fail(f *findings) {
	s.broken = lostError(f)
	if s.lostReported {
		return
	}
	s.lostReported = true
	meta, _ := json.Marshal(map[string]any{"missing": f.missing, "break": f.brk, "database": s.path, "anchor": s.opt.Anchor})
	ev := &warden.SecurityEvent{ID: uuid.NewString(), CreatedAt: audit.Timestamp(s.now()), Type: warden.EventAuditLost, Severity: warden.SevCritical,
		Summary: "the audit log is not what this home recorded, so nothing is decided until it is recovered: " + f.summary(), Metadata: meta}
	if frame, err := encodeEventFrame(ev); err == nil && spoolSupported {
		_, _, _ = appendSpool(s.path+spoolSuffix, frame, s.anchor, false)
	}
}
