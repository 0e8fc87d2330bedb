package warden

import (
	"context"
	"fmt"
	"time"
)

// RateLimit is at most Max slots taken within any Window.
type RateLimit struct {
	Window time.Duration `json:"window"`
	Max    int           `json:"max"`
}

// RateSlot asks the store, in the transaction that records a decision, for
// one slot of a rate-limited kind (signing: 10 an hour, 50 a day). The store
// counts the slots of Kind still held by other traces in each limit's window
// and refuses the slot with *RateExceededError when one is full; the check and
// the take are atomic across processes, so concurrent requests cannot slip
// past a limit.
//
// A slot is held until released (Ledger.Release) and counts for its windows
// from when it was taken. A slot with HoldUntil set is held for a pending
// approval and stops counting at HoldUntil unless the same trace takes it
// again (its approved re-check), which makes it a spent slot. Taking a slot a
// trace already holds takes nothing new.
type RateSlot struct {
	Kind string
	// Key, when set, is unique per Kind for all time (the agent's request
	// id): a key another trace took is refused with *ReplayError.
	Key       string
	Limits    []RateLimit
	HoldUntil time.Time
	// MaxHolds bounds a hold (HoldUntil set) so that asks nobody answers
	// cannot use a limit up: one requester (the recorded entry's
	// RequestedBy and Session) may hold at most MaxHolds pending slots of
	// Kind at once, and pending holds of all requesters together at most
	// half of each limit (at least one), which leaves the rest to requests
	// allowed outright. A hold past either bound is refused with
	// *HoldsExceededError. Zero bounds nothing.
	MaxHolds int
}

// HoldsExceededError is returned by AuditStore.Record when a RateSlot's hold
// for a pending approval is past its MaxHolds bounds. Nothing was written.
type HoldsExceededError struct {
	Kind string
	// Requester is who asked ("agent, session s1") when their own holds are
	// the bound; empty when the holds of all requesters are.
	Requester string
	// Held is how many pending holds there were; Max the bound.
	Held, Max int
	// Window is the limit whose half the holds of all requesters reached;
	// zero for a requester's own bound.
	Window time.Duration
}

func (e *HoldsExceededError) Error() string {
	if e.Requester != "" {
		return fmt.Sprintf("%d %s asks of %s are waiting for a human (at most %d at once); answer them or let them expire", e.Held, e.Kind, e.Requester, e.Max)
	}
	return fmt.Sprintf("%d %s asks are waiting for a human, half of the limit for the last %s (at most %d held by pending asks); answer them or let them expire",
		e.Held, e.Kind, FormatWindow(e.Window), e.Max)
}

// RateExceededError is returned by AuditStore.Record when a RateSlot does not
// fit. Nothing was written.
type RateExceededError struct {
	Kind  string
	Limit RateLimit
	// Held is how many slots were held in the window.
	Held int
}

func (e *RateExceededError) Error() string {
	return fmt.Sprintf("%s rate limit: %d already in the last %s (at most %d)", e.Kind, e.Held, FormatWindow(e.Limit.Window), e.Limit.Max)
}

// ReplayError is returned by AuditStore.Record when a RateSlot's Key was
// already taken by another trace. Nothing was written.
type ReplayError struct {
	Kind, Key string
	// TraceID is the trace that took the key first.
	TraceID string
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("%s request id %q was already used (trace %s); a request id is accepted once", e.Kind, e.Key, e.TraceID)
}

// SlotReader reads the rate-limit slots. Slots are taken only through
// AuditStore.Record, atomically with the decision that took them.
type SlotReader interface {
	// HeldSlots counts the slots of kind taken at or after since that are
	// still held at time at (not released; spent, or held past at), leaving
	// out the slot of exceptTrace.
	HeldSlots(ctx context.Context, kind string, since, at time.Time, exceptTrace string) (int, error)
	// SlotKeyTrace returns the trace that took key for kind, or "" when no
	// trace has.
	SlotKeyTrace(ctx context.Context, kind, key string) (string, error)
}

// FormatWindow writes a rate window the way people say it: "hour", "24h0m0s"
// becomes "day".
func FormatWindow(d time.Duration) string {
	switch d {
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "24 hours"
	case time.Minute:
		return "minute"
	}
	return d.String()
}
