package sqlite

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// The spool is a durable, append-only file beside the database
// (warden.db.spool) that a short-lived process records a decision in without
// opening SQLite at all: one framed record, one write, one fdatasync. Opening
// SQLite costs a whole millisecond or more per process (engine start, schema
// parse, WAL index rebuild), more than everything else `warden check` does.
//
// Spooled entries enter the hash chain when the spool is drained: by any
// process that opens the database (for a read, a debit, a security event, or
// because the spool has grown past spoolDrainBytes). Draining copies every
// complete record into the audit table in one BEGIN IMMEDIATE transaction,
// skipping ids already there (so a drain that crashed after its commit but
// before truncating the spool is harmless), then truncates the spool. Readers
// drain first, so every query sees every acknowledged decision.
//
// A frame is spoolMagic, the payload length (big-endian uint32) and its 64-bit
// FNV-1a checksum (big-endian), then the payload: the entry in the audit
// package's canonical encoding (audit.AppendEntry), the very bytes its hash
// will cover, so no JSON encoder is needed on the hot path. FNV needs
// no tables, unlike CRC-32C, whose tables cost ~0.1 ms to build in every
// process. A frame cut short by a crash,
// or damaged, fails its length or checksum and is skipped; the drain resumes at
// the next magic; a magic inside a payload can only cause a false start, which
// fails its checksum.
const (
	spoolSuffix     = ".spool"
	spoolMagic      = "\xffWS1"
	spoolHeader     = len(spoolMagic) + 4 + 8
	spoolDrainBytes = 256 << 10
	maxSpoolRecord  = 8 << 20
)

func checksum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// encodeFrame frames one normalised entry for the spool.
func encodeFrame(e *warden.AuditEntry) ([]byte, error) {
	frame := make([]byte, spoolHeader, spoolHeader+512+len(e.Resource)+len(e.Args)+len(e.Raw)+len(e.Context)+len(e.Stages)*160)
	frame = audit.AppendEntry(frame, e)
	payload := frame[spoolHeader:]
	if len(payload) > maxSpoolRecord {
		return nil, fmt.Errorf("encode spool record: %d bytes is above the %d byte limit", len(payload), maxSpoolRecord)
	}
	copy(frame, spoolMagic)
	binary.BigEndian.PutUint32(frame[4:], uint32(len(payload)))
	binary.BigEndian.PutUint64(frame[8:], checksum(payload))
	return frame, nil
}

// decodeFrames returns the entries of every intact frame in data, in order, and
// the offsets of damaged or torn frames it skipped.
func decodeFrames(data []byte) (entries []*warden.AuditEntry, skipped []int) {
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], []byte(spoolMagic))
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
		e, err := audit.DecodeEntry(data[off+spoolHeader : end])
		if err != nil || e.ID == "" {
			skipped = append(skipped, off)
		} else {
			entries = append(entries, e)
		}
		off = end
	}
	return entries, skipped
}
