package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

const (
	sqlAuditHasID = `SELECT 1 FROM audit WHERE id = ?`
	sqlEventHasID = `SELECT 1 FROM security_events WHERE id = ?`
)

// spool durably appends e to the spool instead of the database. e enters the
// hash chain (and gets its Seq, PrevHash and Hash) when the spool is drained.
// If the spool has grown past spoolDrainBytes, this process drains it; the
// entry is already durable, so a failed drain is left to the next one.
func (s *Store) spool(ctx context.Context, e *warden.AuditEntry) error {
	frame, err := encodeFrame(e)
	if err == nil {
		err = s.appendFrame(ctx, frame)
	}
	if err != nil {
		return fmt.Errorf("record audit entry: %w", err)
	}
	return nil
}

// spoolEvent durably appends ev to the spool instead of the database, as spool
// does for entries: ev enters the security-event chain (and gets its Seq,
// PrevHash and Hash) when the spool is drained.
func (s *Store) spoolEvent(ctx context.Context, ev *warden.SecurityEvent) error {
	frame, err := encodeEventFrame(ev)
	if err == nil {
		err = s.appendFrame(ctx, frame)
	}
	if err != nil {
		return fmt.Errorf("append security event %s: %w", ev.Type, err)
	}
	return nil
}

// appendFrame durably appends frame to the spool and, if the spool has grown
// past spoolDrainBytes, drains it; the record is already durable, so a failed
// drain is left to the next one.
//
// With an anchor, a spool found shorter than the anchor claims refuses the
// record: the store fails closed (fail) and the loss is recorded.
func (s *Store) appendFrame(ctx context.Context, frame []byte) error {
	a := s.spoolAnchor()
	size, claim, err := appendSpool(s.path+spoolSuffix, frame, a, true)
	if err == nil && claim.lost() {
		s.mu.Lock()
		s.fail(spoolLost(s.path+spoolSuffix, claim))
		err = s.broken
		s.mu.Unlock()
		return err
	}
	if err == nil && size > spoolDrainBytes {
		_ = s.catchUp(ctx)
	}
	return err
}

// spoolAnchor is the anchor a spooling store keeps the spool's claim in, or
// nil for a store without one.
func (s *Store) spoolAnchor() *anchorFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.anchor
}

// spoolLostPrefix opens what spoolLost says.
const spoolLostPrefix = "the spool's tail: "

// spoolLost describes a spool found shorter than its claim.
func spoolLost(path string, c spoolClaim) *findings {
	f := &findings{}
	f.miss(spoolLostPrefix+"%s held %d bytes of acknowledged records and %d were found (truncated or deleted before they entered the chain)",
		path, c.LostClaimed, c.LostFound)
	return f
}

// spoolReady reports whether a store that has not opened its database may
// spool: with an anchor, only when the database file is there and is the
// one the anchor was last written for (one stat and one read of the
// anchor). Otherwise it opens the database, which checks everything; the
// caller then records through it (false, nil), or fails (the error).
func (s *Store) spoolReady(ctx context.Context) (bool, error) {
	if s.opt.Anchor == "" {
		return true, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return false, s.broken
	}
	if s.w != nil || s.closed {
		return false, s.openLocked(ctx)
	}
	if s.anchor == nil {
		a, err := openAnchor(s.opt.Anchor, false)
		if err != nil {
			return false, err
		}
		s.anchor = a
	}
	if s.anchor != nil {
		st, ok, _, err := s.anchor.readDB()
		if err == nil && ok {
			if fi, err := os.Stat(s.path); err == nil {
				if dev, ino := fileID(fi); dev == st.Dev && ino == st.Ino && (dev != 0 || ino != 0) {
					return true, nil
				}
			}
		}
	}
	return false, s.openLocked(ctx)
}

// drainLocked moves every spooled record into its chain, in spool order, in
// one transaction (entries into the audit table, events into security_events)
// and then empties the spool. Records already in their table (a previous drain
// committed but crashed before emptying the spool) are skipped. Damaged or torn
// frames are reported as one security event, chained after the spooled ones.
// s.mu must be held and the write connection open.
//
// With an anchor, a spool shorter than the anchor claims is not drained:
// the store fails closed (fail) and the loss is recorded.
func (s *Store) drainLocked(ctx context.Context) error {
	var lost *spoolClaim
	err := drainSpool(s.path+spoolSuffix, s.anchor, func(data []byte, claim spoolClaim) error {
		if s.anchor != nil && (claim.lost() || claim.Size > int64(len(data))) {
			if !claim.lost() {
				claim.LostClaimed, claim.LostFound = claim.Size, int64(len(data))
			}
			lost = &claim
			return ErrLost
		}
		if len(data) == 0 {
			return nil
		}
		records, skipped := decodeFrames(data)
		return s.txLocked(ctx, func(w *conn) error {
			seq, prev, err := head(w, sqlAuditHead)
			if err != nil {
				return err
			}
			for _, r := range records {
				if ev := r.event; ev != nil {
					if err := audit.NormalizeEvent(ev, s.now()); err != nil {
						skipped = append(skipped, -1)
						continue
					}
					dup, err := hasID(w, sqlEventHasID, ev.ID)
					if err != nil {
						return err
					}
					if !dup {
						if err := insertEvent(w, ev); err != nil {
							return err
						}
					}
					continue
				}
				e := r.entry
				if err := audit.NormalizeEntry(e, s.now()); err != nil {
					skipped = append(skipped, -1)
					continue
				}
				dup, err := hasID(w, sqlAuditHasID, e.ID)
				if err != nil {
					return err
				}
				if dup {
					continue
				}
				seq++
				if err := insertEntry(w, e, seq, prev); err != nil {
					return err
				}
				prev = e.Hash
			}
			if len(skipped) == 0 {
				return nil
			}
			return insertEvent(w, spoolDamageEvent(s, skipped, len(data)))
		})
	})
	if lost != nil {
		// The spool's lock is released: fail may append to it.
		s.fail(spoolLost(s.path+spoolSuffix, *lost))
		return s.broken
	}
	return err
}

// hasID reports whether the row query (sqlAuditHasID or sqlEventHasID) selects
// for id exists.
func hasID(w *conn, query, id string) (bool, error) {
	st, err := w.prepare(query)
	if err != nil {
		return false, err
	}
	defer st.Reset()
	if err := st.BindText(1, id); err != nil {
		return false, err
	}
	if st.Step() {
		return true, nil
	}
	return false, st.Err()
}

func spoolDamageEvent(s *Store, offsets []int, size int) *warden.SecurityEvent {
	meta, _ := json.Marshal(map[string]any{"spool": s.path + spoolSuffix, "offsets": offsets, "spool_bytes": size})
	ev := &warden.SecurityEvent{
		ID:        uuid.NewString(),
		CreatedAt: audit.Timestamp(s.now()),
		Type:      "audit_spool_damaged",
		Severity:  warden.SevWarn,
		Summary: fmt.Sprintf("the audit spool held %d incomplete or damaged records; a process killed while writing leaves one "+
			"(its decision was never printed), anything else means the file was damaged", len(offsets)),
		Metadata: meta,
	}
	return ev
}
