package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/agentwarden/warden/internal/crc32c"
	"github.com/agentwarden/warden/internal/regfile"
)

// A journal is a host's local record of the decisions and events it made
// while the fleet's database could not be reached: appended durably
// (fdatasync) before Record or AppendEvent returns, replayed into the chains
// in its order once the database answers, then emptied. Every process of a
// host appends to the same file under an exclusive flock; one replays at a
// time. A replayed row whose id the log already holds is skipped, so a
// replay cut short between its commit and emptying the file is not
// recorded twice: each row enters the log exactly once.
//
// Format: records of a 1-byte kind ('E' audit entry, 'V' security event), a
// 4-byte big-endian length, the row's canonical encoding (audit.AppendEntry
// or AppendEvent, which round-trips byte for byte), and a 4-byte CRC-32C of
// kind, length and encoding. A record cut short at the end (a crash while
// appending, never acknowledged) is ignored; anything else that does not
// read is an error that stops the replay.
type journal struct {
	path string
}

const (
	journalEntry = 'E'
	journalEvent = 'V'
)

// journalLockWait bounds the wait for the journal's lock: a process that
// holds it for longer (a replay on a connection that hangs) must not hang
// every hook and check of the host behind it; they fail, and fail closed.
var journalLockWait = 10 * time.Second

// lock opens the journal, which must be a regular file, and takes its
// exclusive lock, waiting at most journalLockWait; close releases both.
func (j *journal) lock() (*os.File, error) {
	// A named pipe or a device in its place would be read without end
	// (under the lock, failing every later record as locked).
	f, _, err := regfile.Open(j.path, os.O_RDWR|os.O_CREATE, 0o600, true)
	var nr *regfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, warden.Errorf(warden.EConflict, "the fleet journal %s is %s, not a regular file", j.path, regfile.Kind(nr.Mode)).
			WithHint("something other than warden put it there: move it aside (mv " + j.path + " " + j.path + ".bad); warden starts a new journal")
	}
	if err != nil {
		return nil, fmt.Errorf("open the fleet journal %s: %w", j.path, err)
	}
	if err := lockWithin(f, journalLockWait); err != nil {
		f.Close()
		if errors.Is(err, errLockWait) {
			return nil, warden.Errorf(warden.EUnavailable, "the fleet journal %s stayed locked by another warden process for %s", j.path, journalLockWait).
				WithHint("another process is replaying it into the fleet's database; if that database hangs, restart that process (warden serve)")
		}
		return nil, fmt.Errorf("lock the fleet journal %s: %w", j.path, err)
	}
	return f, nil
}

// append adds records durably.
func (j *journal) append(recs ...[]byte) error {
	f, err := j.lock()
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	var buf []byte
	for _, r := range recs {
		buf = append(buf, r...)
	}
	if _, err := f.WriteAt(buf, end); err != nil {
		_ = f.Truncate(end) // never leave half a record before the next
		return fmt.Errorf("append to the fleet journal %s: %w", j.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync the fleet journal %s: %w", j.path, err)
	}
	if end == 0 {
		// The file may have just been created: its name is durable only
		// once its directory is synced too (fsync(2)). Done under the lock,
		// so whoever appends to it after this finds the name durable.
		if err := syncDir(filepath.Dir(j.path)); err != nil {
			return fmt.Errorf("sync the fleet journal's directory: %w", err)
		}
	}
	return nil
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// record frames one row.
func journalRecord(kind byte, enc []byte) []byte {
	b := make([]byte, 0, 9+len(enc))
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(enc)))
	b = append(b, enc...)
	return binary.BigEndian.AppendUint32(b, crc32c.Checksum(b))
}

// journalRow is one replayed row: an entry or an event.
type journalRow struct {
	entry *warden.AuditEntry
	event *warden.SecurityEvent
}

// parseJournal reads the rows of data in order. A last record cut short is
// left out; a record that is whole but does not verify is an error.
func parseJournal(data []byte) ([]journalRow, error) {
	var rows []journalRow
	for off := 0; off < len(data); {
		rest := data[off:]
		if len(rest) < 5 {
			break // cut short
		}
		n := int(binary.BigEndian.Uint32(rest[1:5]))
		if n < 0 || len(rest) < 9+n {
			break // cut short
		}
		rec := rest[:5+n]
		if binary.BigEndian.Uint32(rest[5+n:9+n]) != crc32c.Checksum(rec) {
			return rows, fmt.Errorf("the fleet journal's record at byte %d does not match its checksum", off)
		}
		enc := rec[5:]
		switch rec[0] {
		case journalEntry:
			e, err := audit.DecodeEntry(enc)
			if err != nil {
				return rows, fmt.Errorf("the fleet journal's record at byte %d: %w", off, err)
			}
			rows = append(rows, journalRow{entry: e})
		case journalEvent:
			ev, err := audit.DecodeEvent(enc)
			if err != nil {
				return rows, fmt.Errorf("the fleet journal's record at byte %d: %w", off, err)
			}
			rows = append(rows, journalRow{event: ev})
		default:
			return rows, fmt.Errorf("the fleet journal's record at byte %d has unknown kind %q", off, rec[0])
		}
		off += 9 + n
	}
	return rows, nil
}

// pending reports whether the journal holds anything (cheaply: its size).
func (j *journal) pending() bool {
	fi, err := os.Stat(j.path)
	return err == nil && fi.Size() > 0
}

// errJournalBad marks a journal that cannot be read back.
var errJournalBad = errors.New("the fleet journal cannot be read back")

// drain runs replay over the journal's rows under its lock, and empties it
// when replay returns nil.
func (j *journal) drain(replay func(rows []journalRow) error) (int, error) {
	f, err := j.lock()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, f); err != nil {
		return 0, fmt.Errorf("read the fleet journal %s: %w", j.path, err)
	}
	if buf.Len() == 0 {
		return 0, nil
	}
	rows, err := parseJournal(buf.Bytes())
	if err != nil {
		return 0, warden.Errorf(warden.EConflict, "the fleet journal %s cannot be read back: %v", j.path, err).Wrap(errJournalBad).
			WithHint("nothing is recorded until it is dealt with: move it aside (and keep it: it holds decisions not yet in the fleet's log)")
	}
	if len(rows) > 0 {
		if err := replay(rows); err != nil {
			return 0, err
		}
	}
	if err := f.Truncate(0); err != nil {
		return len(rows), fmt.Errorf("empty the fleet journal %s: %w", j.path, err)
	}
	return len(rows), f.Sync()
}

// Replay chains what the journal holds into the fleet's database, in the
// journal's order, skipping rows the log already holds, and empties it; it
// returns how many rows it read. The daemon calls it while the journal is
// not empty; every write and read of the store does first.
func (s *Store) Replay(ctx context.Context) (int, error) {
	if s.journal == nil || !s.journal.pending() {
		return 0, nil
	}
	if !s.schemaOK.Load() {
		if err := s.checkSchema(ctx); err != nil {
			return 0, err
		}
		s.schemaOK.Store(true)
	}
	return s.replay(ctx)
}

func (s *Store) replay(ctx context.Context) (int, error) {
	var aSeq, eSeq int64
	var aPrev, ePrev string
	n, err := s.journal.drain(func(rows []journalRow) error {
		return s.txRaw(ctx, func(tx pgx.Tx) error {
			if err := lockChainsTx(ctx, tx); err != nil {
				return err
			}
			var ids []string
			for _, r := range rows {
				if r.entry != nil {
					ids = append(ids, col(r.entry.ID))
				} else {
					ids = append(ids, col(r.event.ID))
				}
			}
			have := map[string]bool{}
			got, err := tx.Query(ctx, `SELECT id FROM audit WHERE id = ANY($1) UNION ALL SELECT id FROM security_events WHERE id = ANY($1)`, ids)
			if err != nil {
				return err
			}
			for got.Next() {
				var id string
				if err := got.Scan(&id); err != nil {
					got.Close()
					return err
				}
				have[id] = true
			}
			got.Close()
			if err := got.Err(); err != nil {
				return err
			}
			if aSeq, aPrev, err = head(ctx, tx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`); err != nil {
				return err
			}
			if eSeq, ePrev, err = head(ctx, tx, `SELECT seq, hash FROM security_events ORDER BY seq DESC LIMIT 1`); err != nil {
				return err
			}
			a0, e0 := aSeq, eSeq
			b := &pgx.Batch{}
			for _, r := range rows {
				switch {
				case r.entry != nil && !have[col(r.entry.ID)]:
					aSeq++
					queueEntry(b, r.entry, aSeq, aPrev)
					aPrev = r.entry.Hash
				case r.event != nil && !have[col(r.event.ID)]:
					eSeq++
					queueEvent(b, r.event, eSeq, ePrev)
					ePrev = r.event.Hash
				}
			}
			if b.Len() == 0 {
				return nil
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return fmt.Errorf("replay the fleet journal: %w", err)
			}
			if s.opt.Key != nil && (aSeq/CheckpointEvery > a0/CheckpointEvery || eSeq/CheckpointEvery > e0/CheckpointEvery) {
				return s.checkpoint(ctx, tx, false)
			}
			return nil
		})
	})
	if err == nil && n > 0 {
		s.saw(aSeq, aPrev, eSeq, ePrev)
	}
	if err != nil && Unreachable(err) && warden.ErrorCodeOf(err) != warden.EUnavailable {
		err = unavailable("replay the fleet journal", err)
	}
	return n, err
}
