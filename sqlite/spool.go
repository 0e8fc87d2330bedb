package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// The spool is a durable, append-only file beside the database
// (warden.db.spool) that a short-lived process records a decision or a
// security event in without opening SQLite at all: one framed record, one
// write, one fdatasync. Opening SQLite costs a whole millisecond or more per
// process (engine start, schema parse, WAL index rebuild), more than everything
// else `warden check` does.
//
// Spooled records enter their hash chains when the spool is drained: by any
// process that opens the database (for a read, a debit, or because the spool
// has grown past spoolDrainBytes). Draining copies every complete record, in
// file order, into its chain (entries into the audit table, events into
// security_events) in one BEGIN IMMEDIATE transaction, skipping ids already
// there (so a drain that crashed after its commit but before truncating the
// spool is harmless), then truncates the spool. Readers drain first, so every
// query sees every acknowledged decision and event.
//
// A frame is a magic naming its kind (spoolMagic for an entry,
// spoolEventMagic for an event), the payload length (big-endian uint32) and
// its 64-bit FNV-1a checksum (big-endian), then the payload: the record in the
// audit package's canonical encoding (audit.AppendEntry or audit.AppendEvent),
// the very bytes its hash will cover, so no JSON encoder is needed on the hot
// path. FNV needs no tables, unlike CRC-32C, whose tables cost ~0.1 ms to build
// in every process. A frame cut short by a crash, or damaged, fails its length
// or checksum and is skipped; the drain resumes at the next magic; a magic
// inside a payload can only cause a false start, which fails its checksum.
const (
	spoolSuffix     = ".spool"
	spoolMagic      = "\xffWS1" // an audit entry
	spoolEventMagic = "\xffWE1" // a security event
	spoolHeader     = len(spoolMagic) + 4 + 8
	spoolDrainBytes = 256 << 10
	maxSpoolRecord  = 8 << 20
)

// magicPrefix is what both magics start with, so one scan finds either.
const magicPrefix = "\xffW"

func checksum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// spoolRecord is one intact spooled record: exactly one of entry and event is
// set.
type spoolRecord struct {
	entry *warden.AuditEntry
	event *warden.SecurityEvent
}

// encodeFrame frames one normalised entry for the spool.
func encodeFrame(e *warden.AuditEntry) ([]byte, error) {
	frame := make([]byte, spoolHeader, spoolHeader+512+len(e.Resource)+len(e.Args)+len(e.Raw)+len(e.Context)+len(e.Stages)*160)
	return sealFrame(audit.AppendEntry(frame, e), spoolMagic)
}

// encodeEventFrame frames one normalised security event for the spool.
func encodeEventFrame(ev *warden.SecurityEvent) ([]byte, error) {
	frame := make([]byte, spoolHeader, spoolHeader+128+len(ev.ID)+len(ev.TraceID)+len(ev.Type)+len(ev.Summary)+len(ev.Metadata))
	return sealFrame(audit.AppendEvent(frame, ev), spoolEventMagic)
}

// sealFrame fills in the header of frame, whose payload follows spoolHeader
// bytes of room, refusing a payload above maxSpoolRecord.
func sealFrame(frame []byte, magic string) ([]byte, error) {
	payload := frame[spoolHeader:]
	if len(payload) > maxSpoolRecord {
		return nil, fmt.Errorf("encode spool record: %d bytes is above the spool's %d byte limit for one record", len(payload), maxSpoolRecord)
	}
	copy(frame, magic)
	binary.BigEndian.PutUint32(frame[4:], uint32(len(payload)))
	binary.BigEndian.PutUint64(frame[8:], checksum(payload))
	return frame, nil
}

// decodeFrames returns the records of every intact frame in data, in order,
// and the offsets of damaged or torn frames it skipped.
func decodeFrames(data []byte) (records []spoolRecord, skipped []int) {
	for off := 0; off < len(data); {
		i := nextMagic(data[off:])
		if i < 0 {
			skipped = append(skipped, off)
			break
		}
		if i > 0 {
			skipped = append(skipped, off)
		}
		off += i
		if len(data)-off < spoolHeader {
			skipped = append(skipped, off)
			break
		}
		n := int(binary.BigEndian.Uint32(data[off+4:]))
		sum := binary.BigEndian.Uint64(data[off+8:])
		end := off + spoolHeader + n
		if n > maxSpoolRecord || end > len(data) || checksum(data[off+spoolHeader:end]) != sum {
			skipped = append(skipped, off)
			off++ // resume at the next magic
			continue
		}
		payload := data[off+spoolHeader : end]
		var r spoolRecord
		var err error
		if string(data[off:off+len(spoolEventMagic)]) == spoolEventMagic {
			r.event, err = audit.DecodeEvent(payload)
			if err == nil && r.event.ID == "" {
				err = errors.New("no id")
			}
		} else {
			r.entry, err = audit.DecodeEntry(payload)
			if err == nil && r.entry.ID == "" {
				err = errors.New("no id")
			}
		}
		if err != nil {
			skipped = append(skipped, off)
		} else {
			records = append(records, r)
		}
		off = end
	}
	return records, skipped
}

// nextMagic returns the index in b of the first frame magic of either kind, or
// -1. An intact spool has one at b[0], so the common case scans nothing.
func nextMagic(b []byte) int {
	for i := 0; i < len(b); {
		j := bytes.Index(b[i:], []byte(magicPrefix))
		if j < 0 {
			return -1
		}
		i += j
		if m := b[i:min(i+len(spoolMagic), len(b))]; string(m) == spoolMagic || string(m) == spoolEventMagic {
			return i
		}
		i++
	}
	return -1
}
