package warden_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentwarden/warden"
)

// TestDebitRefusal: a refusal wrapped by a store comes back as itself (holds
// first when several are joined); a failure is no refusal.
func TestDebitRefusal(t *testing.T) {
	capErr := &warden.CapExceededError{Spent: 1, Amount: 2, Cap: 2}
	rateErr := &warden.RateExceededError{Kind: "trade"}
	holdsErr := &warden.HoldsExceededError{Kind: "trade", Held: 2, Max: 2}
	replayErr := &warden.ReplayError{Kind: "trade", Key: "k"}
	for _, c := range []struct {
		err  error
		want error
	}{
		{fmt.Errorf("tx: %w", capErr), capErr},
		{fmt.Errorf("tx: %w", rateErr), rateErr},
		{fmt.Errorf("tx: %w", holdsErr), holdsErr},
		{fmt.Errorf("tx: %w", replayErr), replayErr},
		{errors.Join(capErr, holdsErr), holdsErr},
	} {
		if got := warden.DebitRefusal(c.err); got != c.want {
			t.Errorf("DebitRefusal(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	for _, err := range []error{nil, errors.New("connection reset"), fmt.Errorf("record: %w", timeoutErr{})} {
		if got := warden.DebitRefusal(err); got != nil {
			t.Errorf("DebitRefusal(%v) = %#v, want nil: a failure is not a refusal", err, got)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "deadline exceeded" }
