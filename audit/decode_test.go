package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

func decodeSample() *warden.AuditEntry {
	return &warden.AuditEntry{
		Seq: 7, ID: "0190-id", TraceID: "trace", CreatedAt: time.UnixMilli(1_800_000_000_123).UTC(),
		Capability: "tool", Action: "call", Resource: "transfer_token", Tool: "transfer_token", Tier: 4,
		Args: json.RawMessage(`{"amount_usd":10}`), Context: "why", RequestedBy: "agent", Autonomous: true,
		Session: "s", Host: "claude", Raw: json.RawMessage(`{"x":[1]}`), Verdict: warden.Ask, Blocked: false,
		Reason: "tier 4", Rule: "safety.manual_only", Result: json.RawMessage(`"ok"`), Output: "out", Error: "e",
		Duration: 1234567,
		Stages: []warden.StageAnswer{
			{Stage: "kill-switch", Verdict: warden.Allow, Reason: "off", Rule: "safety.kill_switch", Duration: 10},
			{Stage: "tool-tier", Verdict: warden.Deny, Reason: "no", Rule: "r", Error: "boom", Duration: 20},
		},
	}
}

func TestDecodeEntryRoundTrip(t *testing.T) {
	for name, e := range map[string]*warden.AuditEntry{"full": decodeSample(), "empty": {CreatedAt: time.UnixMilli(0).UTC()}} {
		t.Run(name, func(t *testing.T) {
			b := AppendEntry(nil, e)
			got, err := DecodeEntry(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, e) {
				t.Fatalf("DecodeEntry(AppendEntry(e)) =\n%+v\nwant\n%+v", got, e)
			}
			if HashEntry(GenesisHash, got) != HashEntry(GenesisHash, e) {
				t.Fatal("the decoded entry hashes differently")
			}
		})
	}
}

func TestDecodeEntryRejects(t *testing.T) {
	good := AppendEntry(nil, decodeSample())
	cases := map[string][]byte{
		"empty":      nil,
		"cut short":  good[:len(good)-3],
		"left over":  append(append([]byte{}, good...), 0),
		"event tag":  AppendEvent(nil, &warden.SecurityEvent{}),
		"huge count": append(AppendEntry(nil, &warden.AuditEntry{})[:len(AppendEntry(nil, &warden.AuditEntry{}))-8], 0x7f, 0, 0, 0, 0, 0, 0, 1),
	}
	for name, b := range cases {
		if e, err := DecodeEntry(b); err == nil {
			t.Errorf("DecodeEntry(%s) = %+v, want an error", name, e)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(AppendEntry(nil, decodeSample()))
	f.Add(AppendEntry(nil, &warden.AuditEntry{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			return
		}
		if again := AppendEntry(nil, e); !bytes.Equal(again, b) {
			t.Fatalf("decode then encode changed the bytes:\n%x\n%x", b, again)
		}
	})
}

func TestDecodeEventRoundTrip(t *testing.T) {
	ev := &warden.SecurityEvent{Seq: 3, ID: "e1", TraceID: "t1", CreatedAt: time.UnixMilli(1_700_000_000_123).UTC(),
		Type: warden.EventSandboxLifecycle, Severity: warden.SevWarn, Summary: "sandbox dev: ready -> degraded", Metadata: []byte(`{"a":1}`)}
	b := AppendEvent(nil, ev)
	got, err := DecodeEvent(b)
	if err != nil || !reflect.DeepEqual(got, ev) {
		t.Fatalf("DecodeEvent(AppendEvent(ev)) = %+v, %v; want %+v", got, err, ev)
	}
	for name, bad := range map[string][]byte{
		"cut short":  b[:len(b)-3],
		"bytes left": append(append([]byte{}, b...), 0),
		"an entry":   AppendEntry(nil, &warden.AuditEntry{ID: "x"}),
		"empty":      nil,
	} {
		if _, err := DecodeEvent(bad); err == nil {
			t.Errorf("DecodeEvent(%s) succeeded", name)
		}
	}
}
