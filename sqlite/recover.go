package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// RecoverResult says what Recover did.
type RecoverResult struct {
	// NewChain is true when a new database was started; false when only the
	// spool had lost its tail and the chain goes on.
	NewChain bool
	// Kept lists where what was left of the old log was moved.
	Kept []string
	// Report is what Verify found before the recovery.
	Report warden.VerifyReport
}

// recovery is the first row of each chain of a recovered home.
type recovery struct {
	entry *warden.AuditEntry
	event *warden.SecurityEvent
}

// Recover brings back into use a home whose audit log is not what its
// anchor recorded, and is the only way besides a new home (opt.Create) to
// get a fresh database. It refuses a log that verifies.
//
// When only the spool lost its tail, the chain goes on: a critical
// audit_log_recovered event saying what was lost is appended, and the
// spool's claim is reset. Otherwise the database (and its -wal and -shm)
// and the anchor are moved aside as NAME.lost-TIME, kept for
// investigation, and a new chain starts whose first rows (an audit entry
// with capability "audit", action "recover", and a critical
// audit_log_recovered event) record what was lost, the anchor the old
// chain had, where the old files went, and who recovered (by). The key
// is kept (created if it is missing), so the old database's checkpoints
// can still be checked. What the spool holds then enters the new chain,
// the audit_log_lost events included.
func Recover(ctx context.Context, path string, opt Options, by string, now time.Time) (RecoverResult, error) {
	var res RecoverResult
	if opt.Anchor == "" {
		return res, errors.New("recover audit db: only an anchored store can be recovered")
	}
	insp := opt
	insp.Inspect, insp.Create = true, false
	s, err := OpenWith(ctx, path, insp)
	if err != nil {
		return res, fmt.Errorf("recover audit db: %w", err)
	}
	res.Report, err = s.Verify(ctx)
	spoolOnly := s.spoolOnly
	s.Close()
	if err != nil {
		return res, fmt.Errorf("recover audit db: %w", err)
	}
	if res.Report.OK() {
		return res, warden.Errorf(warden.EConflict, "the audit log verifies (%d audit rows, %d security events): there is nothing to recover", res.Report.AuditRows, res.Report.EventRows).
			WithHint("`warden audit verify` shows it")
	}
	old := readOldAnchor(opt.Anchor)
	meta := map[string]any{"missing": res.Report.Missing, "break": res.Report.FirstBreak, "by": by, "database": path, "old_anchor": old}
	lost := strings.Join(res.Report.Missing, "; ")
	if b := res.Report.FirstBreak; b != nil {
		lost = strings.TrimPrefix(lost+"; ", "; ") + fmt.Sprintf("%s row %d: %s", b.Table, b.Seq, b.Why)
	}
	if spoolOnly {
		return res, recoverSpool(ctx, path, opt, by, now, lost, meta)
	}

	stamp := now.UTC().Format("20060102T150405.000Z")
	for _, p := range []string{path, path + "-wal", path + "-shm", opt.Anchor} {
		to := p + ".lost-" + stamp
		if p != opt.Anchor {
			to = path + ".lost-" + stamp + strings.TrimPrefix(p, path)
		}
		if err := os.Rename(p, to); err == nil {
			res.Kept = append(res.Kept, to)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("recover audit db: keep %s aside: %w", p, err)
		}
	}
	meta["kept"] = res.Kept
	m, _ := json.Marshal(meta)
	summary := fmt.Sprintf("%s started a new audit chain: the old one was not what the home had recorded (%s)", by, lost)
	if len(res.Kept) > 0 {
		summary += "; what was left of it is kept as " + strings.Join(res.Kept, ", ")
	}
	if old != nil {
		summary += fmt.Sprintf("; its anchor had recorded %d audit rows (head %s) and %d security events (head %s)", old.AuditRows, old.AuditHead, old.EventRows, old.EventHead)
	}
	trace := uuid.NewString()
	rec := &recovery{
		entry: &warden.AuditEntry{ID: uuid.NewString(), TraceID: trace, CreatedAt: now, Capability: "audit", Action: "recover", Resource: path,
			RequestedBy: by, Verdict: warden.Allow, Reason: summary, Rule: "audit.recover", Result: m},
		event: &warden.SecurityEvent{ID: uuid.NewString(), TraceID: trace, CreatedAt: now, Type: warden.EventAuditRecovered,
			Severity: warden.SevCritical, Summary: summary, Metadata: m},
	}
	if err := audit.NormalizeEntry(rec.entry, now); err != nil {
		return res, fmt.Errorf("recover audit db: %w", err)
	}
	if err := audit.NormalizeEvent(rec.event, now); err != nil {
		return res, fmt.Errorf("recover audit db: %w", err)
	}
	fresh := opt
	fresh.Create = true
	s = OpenDeferredWith(path, fresh)
	s.recovery = rec
	s.mu.Lock()
	err = s.openLocked(ctx)
	s.mu.Unlock()
	if err != nil {
		return res, fmt.Errorf("recover audit db: %w", err)
	}
	res.NewChain = true
	return res, s.Close()
}

// recoverSpool records the spool's loss in the chain and resets the claim.
func recoverSpool(ctx context.Context, path string, opt Options, by string, now time.Time, lost string, meta map[string]any) error {
	m, _ := json.Marshal(meta)
	ev := &warden.SecurityEvent{ID: uuid.NewString(), CreatedAt: now, Type: warden.EventAuditRecovered, Severity: warden.SevCritical,
		Summary: fmt.Sprintf("%s acknowledged a loss and the chain goes on: %s", by, lost), Metadata: m}
	if err := audit.NormalizeEvent(ev, now); err != nil {
		return fmt.Errorf("recover audit db: %w", err)
	}
	frame, err := encodeEventFrame(ev)
	if err != nil {
		return fmt.Errorf("recover audit db: %w", err)
	}
	a, err := openAnchor(opt.Anchor, false)
	if err != nil || a == nil {
		return fmt.Errorf("recover audit db: the chain anchor is gone: %w", err)
	}
	defer a.close()
	// The event is durable in the spool before the claim that names the
	// loss is cleared; a crash in between leaves the loss to recover again.
	if _, _, err := appendSpool(path+spoolSuffix, frame, a, false); err != nil {
		return fmt.Errorf("recover audit db: %w", err)
	}
	if err := resetSpoolClaim(path+spoolSuffix, a); err != nil {
		return fmt.Errorf("recover audit db: %w", err)
	}
	s, err := OpenWith(ctx, path, opt)
	if err != nil {
		return fmt.Errorf("recover audit db: %w", err)
	}
	return s.Close()
}

// readOldAnchor returns the anchor's newest intact record, or nil.
func readOldAnchor(path string) *audit.Checkpoint {
	a, err := openAnchor(path, false)
	if err != nil || a == nil {
		return nil
	}
	defer a.close()
	st, ok, _, err := a.readDB()
	if err != nil || !ok {
		return nil
	}
	return &st.Checkpoint
}

// insertRecoveryLocked stores the first rows of a recovered home's chains.
// s.mu must be held, s.w open on the new, empty database.
func (s *Store) insertRecoveryLocked(ctx context.Context) error {
	rec := s.recovery
	s.recovery = nil
	return s.txLocked(ctx, func(w *conn) error {
		if err := insertEntry(w, rec.entry, 1, audit.GenesisHash); err != nil {
			return err
		}
		return insertEvent(w, rec.event)
	})
}

// SpoolEvent appends ev to the spool beside the database at path whatever
// state the audit log is in: a home whose log is lost still keeps its
// security events (the emergency stop turned on, a policy change), which
// enter the chain when the home is recovered. It is durable when it
// returns nil.
func SpoolEvent(path string, opt Options, ev *warden.SecurityEvent) error {
	if err := audit.NormalizeEvent(ev, time.Now()); err != nil {
		return &warden.Error{Code: warden.EInvalid, Message: "cannot append " + err.Error()}
	}
	if ev.ID == "" {
		ev.ID = uuid.NewString()
	}
	frame, err := encodeEventFrame(ev)
	if err != nil {
		return fmt.Errorf("spool security event %s: %w", ev.Type, err)
	}
	a, err := openAnchor(opt.Anchor, false)
	if err != nil {
		return fmt.Errorf("spool security event %s: %w", ev.Type, err)
	}
	defer a.close()
	if _, _, err := appendSpool(path+spoolSuffix, frame, a, false); err != nil {
		return fmt.Errorf("spool security event %s: %w", ev.Type, err)
	}
	return nil
}
