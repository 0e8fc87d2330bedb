package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentwarden/warden"
)

// DecodeEntry reads an entry written by AppendEntry. It is strict: a wrong tag,
// a field cut short, an unknown verdict, a tier outside 0–4 or bytes left over
// are errors, so DecodeEntry(b) succeeds only when AppendEntry of the result
// gives b back. Empty JSON fields come back nil.
func DecodeEntry(b []byte) (*warden.AuditEntry, error) {
	d := decoder{b: b}
	if tag := d.string(); tag != EntryEncoding && d.err == nil {
		return nil, fmt.Errorf("decode audit entry: encoding %q, want %q", tag, EntryEncoding)
	}
	e := &warden.AuditEntry{}
	e.Seq = d.int()
	e.ID = d.string()
	e.TraceID = d.string()
	e.CreatedAt = time.UnixMilli(d.int()).UTC()
	e.Capability = d.string()
	e.Action = d.string()
	e.Resource = d.string()
	e.Tool = d.string()
	e.Tier = d.tier()
	e.Args = d.bytes()
	e.Context = d.string()
	e.RequestedBy = d.string()
	e.Autonomous = d.bool()
	e.Session = d.string()
	e.Host = d.string()
	e.Raw = d.bytes()
	e.Verdict = d.verdict()
	e.Blocked = d.bool()
	e.BlockReason = d.string()
	e.Reason = d.string()
	e.Rule = d.string()
	e.Result = d.bytes()
	e.Output = d.string()
	e.Error = d.string()
	e.Duration = time.Duration(d.int())
	n := d.int()
	if d.err == nil && (n < 0 || n > int64(len(d.b))) { // every stage takes at least one byte
		d.fail("stage count %d is impossible", n)
	}
	if d.err == nil && n > 0 {
		e.Stages = make([]warden.StageAnswer, n)
		for i := range e.Stages {
			st := &e.Stages[i]
			st.Stage = d.string()
			st.Verdict = d.verdict()
			st.Reason = d.string()
			st.Rule = d.string()
			st.Error = d.string()
			st.Duration = time.Duration(d.int())
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left over", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode audit entry: %w", d.err)
	}
	return e, nil
}

// DecodeEvent reads a security event written by AppendEvent. It is strict
// in the same way as DecodeEntry: a wrong tag, a field cut short or bytes
// left over are errors, and it succeeds only when AppendEvent of the result
// gives b back. Empty metadata comes back nil.
func DecodeEvent(b []byte) (*warden.SecurityEvent, error) {
	d := decoder{b: b}
	if tag := d.string(); tag != EventEncoding && d.err == nil {
		return nil, fmt.Errorf("decode security event: encoding %q, want %q", tag, EventEncoding)
	}
	ev := &warden.SecurityEvent{}
	ev.Seq = d.int()
	ev.ID = d.string()
	ev.TraceID = d.string()
	ev.CreatedAt = time.UnixMilli(d.int()).UTC()
	ev.Type = d.string()
	ev.Severity = warden.Severity(d.string())
	ev.Summary = d.string()
	ev.Metadata = d.bytes()
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left over", len(d.b))
	}
	if d.err == nil && !bytes.Equal(AppendEvent(make([]byte, 0, len(b)), ev), b) {
		d.fail("not its canonical encoding")
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode security event: %w", d.err)
	}
	return ev, nil
}

// decoder reads the primitives of the canonical encoding, keeping the first
// error; after an error every read returns a zero value.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("data ends inside a field")

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) bytes() []byte {
	if d.err != nil {
		return nil
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || n > uint64(len(d.b)-k) {
		d.err = errShort
		return nil
	}
	p := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	if n == 0 {
		return nil
	}
	return p
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	v := int64(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *decoder) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) < 1 {
		d.err = errShort
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.fail("boolean byte %d", v)
	}
	return v == 1
}

func (d *decoder) verdict() warden.Verdict {
	s := d.string()
	if d.err != nil {
		return warden.Deny
	}
	v, err := warden.ParseVerdict(s)
	if err != nil {
		d.fail("%v", err)
	}
	return v
}

func (d *decoder) tier() warden.Tier {
	n := d.int()
	if d.err == nil && (n < 0 || n > int64(warden.TierManualOnly) || n > math.MaxUint8) {
		d.fail("tier %d out of range", n)
	}
	return warden.Tier(n)
}
