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
