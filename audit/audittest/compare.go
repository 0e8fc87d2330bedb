package audittest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentwarden/warden"
)

// diffEntry lists the fields where got differs from want. Times compare with
// Equal; empty and nil JSON and stage lists are the same.
func diffEntry(got, want *warden.AuditEntry) []string {
	var d []string
	str := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	num := func(name string, g, w int64) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %d, want %d", name, g, w))
		}
	}
	js := func(name string, g, w []byte) {
		if !bytes.Equal(g, w) {
			d = append(d, fmt.Sprintf("%s = %s, want %s", name, g, w))
		}
	}
	num("Seq", got.Seq, want.Seq)
	str("ID", got.ID, want.ID)
	str("TraceID", got.TraceID, want.TraceID)
	if !got.CreatedAt.Equal(want.CreatedAt) {
		d = append(d, fmt.Sprintf("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt))
	}
	str("Capability", got.Capability, want.Capability)
	str("Action", got.Action, want.Action)
	str("Resource", got.Resource, want.Resource)
	str("Tool", got.Tool, want.Tool)
	num("Tier", int64(got.Tier), int64(want.Tier))
	js("Args", got.Args, want.Args)
	str("Context", got.Context, want.Context)
	str("RequestedBy", got.RequestedBy, want.RequestedBy)
	str("Autonomous", fmt.Sprint(got.Autonomous), fmt.Sprint(want.Autonomous))
	str("Session", got.Session, want.Session)
	str("Host", got.Host, want.Host)
	js("Raw", got.Raw, want.Raw)
	str("Verdict", got.Verdict.String(), want.Verdict.String())
	str("Blocked", fmt.Sprint(got.Blocked), fmt.Sprint(want.Blocked))
	str("BlockReason", got.BlockReason, want.BlockReason)
	str("Reason", got.Reason, want.Reason)
	str("Rule", got.Rule, want.Rule)
	js("Result", got.Result, want.Result)
	str("Output", got.Output, want.Output)
	str("Error", got.Error, want.Error)
	num("Duration", int64(got.Duration), int64(want.Duration))
	if len(got.Stages) != len(want.Stages) {
		d = append(d, fmt.Sprintf("%d stages, want %d", len(got.Stages), len(want.Stages)))
	} else {
		for i := range got.Stages {
			if got.Stages[i] != want.Stages[i] {
				d = append(d, fmt.Sprintf("Stages[%d] = %+v, want %+v", i, got.Stages[i], want.Stages[i]))
			}
		}
	}
	str("PrevHash", got.PrevHash, want.PrevHash)
	str("Hash", got.Hash, want.Hash)
	return d
}

// sameEntries fails the test unless got and want hold the same entries in the
// same order.
func sameEntries(t *testing.T, what string, got []warden.AuditEntry, want []*warden.AuditEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d entries (seqs %v), want %d (seqs %v)", what, len(got), seqsOf(got), len(want), seqsOfPtr(want))
	}
	for i := range got {
		if d := diffEntry(&got[i], want[i]); len(d) > 0 {
			t.Errorf("%s: entry %d (seq %d) differs:", what, i, want[i].Seq)
			for _, line := range d {
				t.Errorf("    %s", line)
			}
		}
	}
}

func seqsOf(es []warden.AuditEntry) []int64 {
	out := make([]int64, len(es))
	for i := range es {
		out[i] = es[i].Seq
	}
	return out
}

func seqsOfPtr(es []*warden.AuditEntry) []int64 {
	out := make([]int64, len(es))
	for i := range es {
		out[i] = es[i].Seq
	}
	return out
}

// diffEvent lists the fields where got differs from want.
func diffEvent(got, want *warden.SecurityEvent) []string {
	var d []string
	if got.Seq != want.Seq || got.ID != want.ID || got.TraceID != want.TraceID || got.Type != want.Type ||
		got.Severity != want.Severity || got.Summary != want.Summary || got.PrevHash != want.PrevHash || got.Hash != want.Hash {
		d = append(d, fmt.Sprintf("got %+v\n want %+v", *got, *want))
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		d = append(d, fmt.Sprintf("CreatedAt = %v, want %v", got.CreatedAt, want.CreatedAt))
	}
	if !bytes.Equal(got.Metadata, want.Metadata) {
		d = append(d, fmt.Sprintf("Metadata = %s, want %s", got.Metadata, want.Metadata))
	}
	return d
}
