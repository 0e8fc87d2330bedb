package finance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agentwarden/warden"
)

// recorder is a Backend that records what it was asked to execute.
type recorder struct {
	Backend
	swaps []Clearance
	err   error
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Swap(_ context.Context, _ SwapQuote, c Clearance) (Fill, error) {
	if err := c.Check(); err != nil {
		return Fill{}, err
	}
	r.swaps = append(r.swaps, c)
	return Fill{ValueUSD: 100 * warden.MicrosPerDollar}, r.err
}

func buy() *warden.Request {
	return &warden.Request{Capability: warden.CapTrade, Action: Buy, Resource: "WETH",
		Params: map[string]json.RawMessage{"chain": json.RawMessage(`"base"`), "amount_usd": json.RawMessage(`"100"`)}}
}

func TestTraderExecutesOnlyWhatTheGateAllowed(t *testing.T) {
	for _, v := range []warden.Verdict{warden.Deny, warden.Ask, warden.Sandbox, warden.Allow} {
		t.Run(v.String(), func(t *testing.T) {
			b := &recorder{}
			var released []string
			tr := &Trader{Backend: b, Slippage: DefaultSlippage(),
				Decide: func(context.Context, *warden.Request, DecideOptions) (warden.Decision, error) {
					return warden.Decision{Verdict: v, TraceID: "t1"}, nil
				},
				Release: func(_ context.Context, id, _ string) error { released = append(released, id); return nil }}
			ex, err := tr.Execute(context.Background(), buy(), DecideOptions{})
			if err != nil {
				t.Fatal(err)
			}
			executed := len(b.swaps) == 1
			if executed != (v == warden.Allow) || (ex.Fill != nil) != executed {
				t.Fatalf("verdict %v: executed %v (fill %v)", v, executed, ex.Fill)
			}
			if executed && b.swaps[0].TraceID() != "t1" {
				t.Errorf("clearance trace %q, want t1", b.swaps[0].TraceID())
			}
			if len(released) != 0 {
				t.Errorf("released %v after a decision that executed or reserved nothing", released)
			}
		})
	}
}

func TestTraderReleasesWhatDidNotExecute(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		release bool
	}{
		{"backend refused", errors.New("insufficient balance"), true},
		{"outcome unknown", fmt.Errorf("read fill: timeout (%w)", ErrOutcomeUnknown), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var released []string
			tr := &Trader{Backend: &recorder{err: c.err},
				Decide: func(context.Context, *warden.Request, DecideOptions) (warden.Decision, error) {
					return warden.Decision{Verdict: warden.Allow, TraceID: "t2"}, nil
				},
				Release: func(_ context.Context, id, _ string) error { released = append(released, id); return nil }}
			_, err := tr.Execute(context.Background(), buy(), DecideOptions{})
			if err == nil {
				t.Fatal("a failed execution returned no error")
			}
			if got := len(released) == 1; got != c.release {
				t.Fatalf("released %v, want release %v", released, c.release)
			}
		})
	}
}

func TestTraderDryRunExecutesNothing(t *testing.T) {
	b := &recorder{}
	var opts []DecideOptions
	tr := &Trader{Backend: b, Decide: func(_ context.Context, _ *warden.Request, o DecideOptions) (warden.Decision, error) {
		opts = append(opts, o)
		return warden.Decision{Verdict: warden.Allow, TraceID: "t3"}, nil
	}}
	ex, err := tr.Execute(context.Background(), buy(), DecideOptions{DryRun: true})
	if err != nil || len(b.swaps) != 0 || !ex.DryRun || len(opts) != 1 || !opts[0].DryRun {
		t.Fatalf("dry run: err %v, swaps %d, execution %+v, options %+v", err, len(b.swaps), ex, opts)
	}
}

func TestZeroClearanceIsRefused(t *testing.T) {
	if err := (Clearance{}).Check(); !errors.Is(err, ErrNotCleared) {
		t.Fatalf("Clearance{}.Check() = %v, want ErrNotCleared", err)
	}
	var tr *Trader
	if _, err := tr.Execute(context.Background(), buy(), DecideOptions{}); err == nil {
		t.Fatal("a nil Trader executed")
	}
}

// A trade that executed but whose outcome could not be recorded is not
// reported as a quiet success: the fill is returned with an error.
func TestTraderReportsAnUnrecordedOutcome(t *testing.T) {
	tr := &Trader{Backend: &recorder{},
		Decide: func(context.Context, *warden.Request, DecideOptions) (warden.Decision, error) {
			return warden.Decision{Verdict: warden.Allow, TraceID: "t4"}, nil
		},
		Result: func(context.Context, string, warden.Severity, string, map[string]any) error {
			return errors.New("disk full")
		}}
	ex, err := tr.Execute(context.Background(), buy(), DecideOptions{})
	if err == nil || ex.Fill == nil {
		t.Fatalf("Execute = %+v, %v; want the fill and an error", ex, err)
	}
}
