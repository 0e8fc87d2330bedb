package audit

import (
	"encoding/binary"
	"time"

	"github.com/agentwarden/warden"
)

// Encoding tags open every canonical encoding. They name the kind of row and the
// encoding version, so an entry can never hash like an event and a future
// encoding can never collide with this one. Changing what AppendEntry or
// AppendEvent writes requires a new tag.
const (
	EntryEncoding = "warden.audit_entry.v1"
	EventEncoding = "warden.security_event.v1"
)

// TimePrecision is the resolution at which the chain covers CreatedAt. Stores
// keep exactly this precision (see Timestamp), so a row read back hashes as it
// did when it was written.
const TimePrecision = time.Millisecond

// Timestamp returns t at the chain's precision (Unix milliseconds, rounded
// down) in UTC: the value a store keeps and hashes.
func Timestamp(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// AppendEntry appends the canonical encoding of e to b and returns the extended
// slice. The encoding covers every stored field of e, Seq and the stages
// included. PrevHash and Hash are not part of it: HashEntry prefixes the
// predecessor's hash instead.
//
// Format (v1): every field in a fixed order; strings and JSON as a uvarint byte
// length followed by the bytes; integers, durations and CreatedAt (Unix
// milliseconds) as 8-byte big-endian two's complement; booleans as one byte 0 or
// 1; verdicts by name; stages as a count followed by each stage's fields. Every
// field is self-delimiting, so no two different entries encode alike.
func AppendEntry(b []byte, e *warden.AuditEntry) []byte {
	b = appendString(b, EntryEncoding)
	b = appendInt(b, e.Seq)
	b = appendString(b, e.ID)
	b = appendString(b, e.TraceID)
	b = appendInt(b, e.CreatedAt.UnixMilli())
	b = appendString(b, e.Capability)
	b = appendString(b, e.Action)
	b = appendString(b, e.Resource)
	b = appendString(b, e.Tool)
	b = appendInt(b, int64(e.Tier))
	b = appendBytes(b, e.Args)
	b = appendString(b, e.Context)
	b = appendString(b, e.RequestedBy)
	b = appendBool(b, e.Autonomous)
	b = appendString(b, e.Session)
	b = appendString(b, e.Host)
	b = appendBytes(b, e.Raw)
	b = appendString(b, e.Verdict.String())
	b = appendBool(b, e.Blocked)
	b = appendString(b, e.BlockReason)
	b = appendString(b, e.Reason)
	b = appendString(b, e.Rule)
	b = appendBytes(b, e.Result)
	b = appendString(b, e.Output)
	b = appendString(b, e.Error)
	b = appendInt(b, int64(e.Duration))
	b = appendInt(b, int64(len(e.Stages)))
	for i := range e.Stages {
		st := &e.Stages[i]
		b = appendString(b, st.Stage)
		b = appendString(b, st.Verdict.String())
		b = appendString(b, st.Reason)
		b = appendString(b, st.Rule)
		b = appendString(b, st.Error)
		b = appendInt(b, int64(st.Duration))
	}
	return b
}

// AppendEvent appends the canonical encoding of ev to b and returns the extended
// slice, in the format AppendEntry describes. PrevHash and Hash are not part of
// it.
func AppendEvent(b []byte, ev *warden.SecurityEvent) []byte {
	b = appendString(b, EventEncoding)
	b = appendInt(b, ev.Seq)
	b = appendString(b, ev.ID)
	b = appendString(b, ev.TraceID)
	b = appendInt(b, ev.CreatedAt.UnixMilli())
	b = appendString(b, ev.Type)
	b = appendString(b, string(ev.Severity))
	b = appendString(b, ev.Summary)
	b = appendBytes(b, ev.Metadata)
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendInt(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}
