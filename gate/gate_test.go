package gate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// fakeStore is a func-field AuditStore; only Record is used by the gate.
type fakeStore struct {
	warden.AuditStore
	record func(context.Context, *warden.AuditEntry, *warden.Debit) error
}

func (f *fakeStore) Record(ctx context.Context, e *warden.AuditEntry, d *warden.Debit) error {
	return f.record(ctx, e, d)
}

type deciderFunc func(context.Context, *warden.Request) warden.Decision

func (f deciderFunc) Decide(ctx context.Context, r *warden.Request) warden.Decision { return f(ctx, r) }

func allowAll(context.Context, *warden.Request) warden.Decision {
	return warden.Decision{Verdict: warden.Allow, Rule: "t", Reason: "fine", Tier: 1,
		Stages: []warden.StageAnswer{{Stage: "daily-spend-cap", Verdict: warden.Allow, Rule: "safety.daily_cap", Reason: "fits"}}}
}

func newGate(d deciderFunc, s *fakeStore) *Gate {
	return &Gate{
		Decider: d, Store: s,
		Debit: func(r *warden.Request, at time.Time) *warden.Debit {
			if a, ok, _ := r.AmountUSD(); ok {
				return &warden.Debit{Amount: a, Cap: 100 * warden.MicrosPerDollar, Since: at.Add(-warden.SpendWindow)}
			}
			return nil
		},
		Now:   func() time.Time { return time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) },
		NewID: func() string { return "trace-1" },
	}
}

func TestCheckRecordsBeforeReturning(t *testing.T) {
	var got []*warden.AuditEntry
	s := &fakeStore{record: func(_ context.Context, e *warden.AuditEntry, _ *warden.Debit) error {
		got = append(got, e)
		return nil
	}}
	d, err := newGate(allowAll, s).Check(context.Background(), &warden.Request{Capability: "tool", Action: "call", Resource: "get_price"})
	if err != nil || d.Verdict != warden.Allow || d.TraceID != "trace-1" {
		t.Fatalf("Check = %+v, %v; want allow with trace-1", d, err)
	}
	if len(got) != 1 || got[0].TraceID != "trace-1" || got[0].Verdict != warden.Allow || len(got[0].Stages) != 1 {
		t.Fatalf("recorded %+v, want one allow entry with its stage", got)
	}
}

func TestStoreFailureReturnsNoDecision(t *testing.T) {
	s := &fakeStore{record: func(context.Context, *warden.AuditEntry, *warden.Debit) error { return errors.New("disk full") }}
	d, err := newGate(allowAll, s).Check(context.Background(), &warden.Request{Capability: "tool", Action: "call"})
	if err == nil {
		t.Fatalf("Check with a failing store = %+v, want an error", d)
	}
	if d.Verdict != warden.Deny {
		t.Fatalf("the decision returned with the error is %v, want the zero value (deny)", d.Verdict)
	}
}

func TestUnconfiguredGateErrors(t *testing.T) {
	for name, g := range map[string]*Gate{"nil": nil, "no store": {Decider: deciderFunc(allowAll)}, "no decider": {Store: &fakeStore{}}} {
		if _, err := g.Check(context.Background(), &warden.Request{}); err == nil {
			t.Errorf("%s gate decided without error", name)
		}
	}
}

func TestCapExceededAtCommitDenies(t *testing.T) {
	var recorded []*warden.AuditEntry
	var debits []*warden.Debit
	s := &fakeStore{record: func(_ context.Context, e *warden.AuditEntry, d *warden.Debit) error {
		debits = append(debits, d)
		if d != nil {
			return &warden.CapExceededError{Spent: 90 * warden.MicrosPerDollar, Amount: d.Amount, Cap: d.Cap}
		}
		recorded = append(recorded, e)
		return nil
	}}
	req := &warden.Request{Capability: "tool", Action: "call", Params: map[string]json.RawMessage{"amount_usd": json.RawMessage("20")}}
	d, err := newGate(allowAll, s).Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != warden.Deny || d.Rule != "safety.daily_cap" || d.Stages[0].Verdict != warden.Deny {
		t.Fatalf("decision %+v: want deny by safety.daily_cap with the stage answer updated", d)
	}
	if len(debits) != 2 || debits[0] == nil || debits[1] != nil {
		t.Fatalf("debits %v: want one atomic attempt, then a record without debit", debits)
	}
	if len(recorded) != 1 || recorded[0].Verdict != warden.Deny || !recorded[0].Blocked {
		t.Fatalf("recorded %+v, want one deny", recorded)
	}
}

func TestOnlyAllowedRequestsDebit(t *testing.T) {
	for _, v := range []warden.Verdict{warden.Ask, warden.Deny} {
		var debit *warden.Debit
		s := &fakeStore{record: func(_ context.Context, _ *warden.AuditEntry, d *warden.Debit) error { debit = d; return nil }}
		decide := func(context.Context, *warden.Request) warden.Decision { return warden.Decision{Verdict: v} }
		req := &warden.Request{Capability: "tool", Action: "call", Params: map[string]json.RawMessage{"amount_usd": json.RawMessage("20")}}
		if _, err := newGate(decide, s).Check(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if debit != nil {
			t.Errorf("a %v decision debited the ledger", v)
		}
	}
}

func TestSecretsAreRedactedBeforeStorageAndOutput(t *testing.T) {
	const key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	var stored []byte
	s := &fakeStore{record: func(_ context.Context, e *warden.AuditEntry, _ *warden.Debit) error {
		stored, _ = json.Marshal(e)
		return nil
	}}
	decide := func(_ context.Context, r *warden.Request) warden.Decision {
		return warden.Decision{Verdict: warden.Deny, Reason: "refused " + r.Resource, Rule: "x"}
	}
	req := &warden.Request{
		Capability: "shell", Action: "exec",
		Resource: "curl -H 'x-api-key: " + key + "' https://api.example.com",
		Context:  "use key " + key,
		Params:   map[string]json.RawMessage{"password": json.RawMessage(`"hunter2hunter2"`)},
		Raw:      json.RawMessage(`{"tool_input":{"command":"echo ` + key + `"}}`),
	}
	d, err := newGate(decide, s).Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(d)
	for what, b := range map[string][]byte{"stored entry": stored, "returned decision": out} {
		for _, secret := range []string{key, "hunter2hunter2"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s contains the secret %q: %s", what, secret, b)
			}
		}
	}
}
