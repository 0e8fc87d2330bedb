package finance

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentwarden/warden"
)

// DecideOptions adjust how the Trader's gate decides one order.
type DecideOptions struct {
	// DryRun decides and records without reserving anything in the ledger.
	DryRun bool
	// Wait lets an ask open an approval and wait for a human's answer.
	Wait bool
}

// Trader is the one path that executes an order: it asks the gate (the
// pipeline, whose trade stages are the FullRiskManager, the audit log and
// the ledger's atomic reservation) and only on allow issues the Clearance a
// Backend needs. A failed execution releases the reservation. Every outcome
// is recorded as an action_result event on the decision's trace.
//
// All fields but Events are required; a Trader missing Decide executes
// nothing.
type Trader struct {
	Backend Backend
	// Decide runs req through the gate and returns the recorded decision.
	// An error means nothing was decided, and nothing executes.
	Decide func(ctx context.Context, req *warden.Request, opt DecideOptions) (warden.Decision, error)
	// Release gives back the ledger reservation of the trace.
	Release func(ctx context.Context, traceID, reason string) error
	// Result records what an execution did (warden.EventActionResult).
	Result   func(ctx context.Context, traceID string, sev warden.Severity, summary string, meta map[string]any) error
	Slippage SlippagePolicy
	Resolver Resolver
}

// Execution is what Execute did.
type Execution struct {
	Decision warden.Decision `json:"decision"`
	// Fill is set when the order executed.
	Fill *Fill `json:"fill,omitempty"`
	// DryRun is true when nothing was reserved or executed by design.
	DryRun bool `json:"dry_run,omitempty"`
}

// Execute decides req and, when allowed, executes it on the backend. A
// refused order returns its decision and no error; an error means the order
// was allowed but did not execute (its reservation is released), or nothing
// could be decided.
func (t *Trader) Execute(ctx context.Context, req *warden.Request, opt DecideOptions) (Execution, error) {
	if t == nil || t.Decide == nil || t.Backend == nil {
		return Execution{}, warden.Errorf(warden.EInternal, "the trader is not configured, so nothing executes")
	}
	d, err := t.Decide(ctx, req, opt)
	if err != nil {
		return Execution{}, err
	}
	ex := Execution{Decision: d, DryRun: opt.DryRun}
	if d.Verdict != warden.Allow || opt.DryRun {
		return ex, nil
	}
	fill, err := t.execute(ctx, req, Clearance{traceID: d.TraceID})
	if errors.Is(err, ErrOutcomeUnknown) {
		if rerr := t.result(ctx, d.TraceID, warden.SevError, "trade outcome unknown: "+err.Error(), map[string]any{"backend": t.Backend.Name(), "released": false}); rerr != nil {
			err = fmt.Errorf("%w; and recording the outcome failed: %v", err, rerr)
		}
		return ex, warden.Errorf(warden.EUnavailable, "the %s was sent to the %s backend but its outcome is unknown", req.Action, t.Backend.Name()).
			Wrap(err).WithHint("check the venue before retrying; the daily reservation is kept, since the trade may have happened")
	}
	if err != nil {
		reason := "the backend did not execute: " + err.Error()
		if rerr := t.release(ctx, d.TraceID, reason); rerr != nil {
			err = fmt.Errorf("%w; and releasing the reservation failed: %v", err, rerr)
		}
		if rerr := t.result(ctx, d.TraceID, warden.SevWarn, "trade failed: "+err.Error(), map[string]any{"backend": t.Backend.Name(), "released": true}); rerr != nil {
			err = fmt.Errorf("%w; and recording the failure failed: %v", err, rerr)
		}
		return ex, warden.Errorf(warden.EUnavailable, "the %s was allowed but the %s backend did not execute it", req.Action, t.Backend.Name()).
			Wrap(err).WithHint("nothing was traded and the daily reservation was given back; check the backend and try again")
	}
	fill.TraceID = d.TraceID
	ex.Fill = &fill
	if err := t.result(ctx, d.TraceID, warden.SevInfo, fmt.Sprintf("trade executed: %s %s, $%s", req.Action, req.Resource, fill.ValueUSD),
		map[string]any{"backend": t.Backend.Name(), "fill": fill}); err != nil {
		// The trade happened; say so, and that its record is missing.
		return ex, warden.Errorf(warden.EUnavailable, "the %s executed (fill %s) but its outcome could not be recorded in the audit log", req.Action, fill.ID).
			Wrap(err).WithHint("the decision is recorded; check $WARDEN_HOME/warden.db and the backend's own history")
	}
	return ex, nil
}

// execute turns the allowed request into the backend call.
func (t *Trader) execute(ctx context.Context, req *warden.Request, c Clearance) (Fill, error) {
	o, err := ParseOrder(req)
	if err != nil {
		return Fill{}, err
	}
	res := t.Resolver
	chain, err := res.Chain(o.Chain)
	if err != nil {
		return Fill{}, err
	}
	token, err := res.Token(chain, ParseTokenRef(o.Token))
	if err != nil && !IsUnlisted(err) {
		return Fill{}, err
	}
	switch o.Action {
	case PerpOpen:
		return t.Backend.OpenPerp(ctx, PerpOrder{Token: token, Side: o.Side, MarginUSD: o.AmountUSD, Leverage: o.Leverage}, c)
	case PerpClose:
		return t.Backend.ClosePerp(ctx, o.Position, c)
	case Transfer:
		return t.Backend.Transfer(ctx, TransferOrder{Token: token, AmountUSD: o.AmountUSD, Recipient: o.Recipient}, c)
	}
	q, err := res.Quote(o)
	if err != nil {
		return Fill{}, err
	}
	if q.MaxSlippage != q.MaxSlippage { // NaN: the order gave none
		q.MaxSlippage = t.Slippage.Tolerance(o.AmountUSD)
	}
	return t.Backend.Swap(ctx, q, c)
}

func (t *Trader) release(ctx context.Context, traceID, reason string) error {
	if t.Release == nil {
		return fmt.Errorf("no ledger to release into")
	}
	return t.Release(ctx, traceID, reason)
}

// result records an outcome; a Trader without Result records none.
func (t *Trader) result(ctx context.Context, traceID string, sev warden.Severity, summary string, meta map[string]any) error {
	if t.Result == nil {
		return nil
	}
	return t.Result(ctx, traceID, sev, summary, meta)
}
