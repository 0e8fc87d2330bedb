package stoploss_test

import (
	"testing"

	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/finance/stoploss/stoplosstest"
)

func TestMemStoreConformance(t *testing.T) {
	stoplosstest.Run(t, func(*testing.T) stoploss.Store { return &stoploss.MemStore{} })
}

func TestMarkKey(t *testing.T) {
	r := stoploss.Rule{ID: "sl_1"}
	for _, tc := range []struct {
		target   string
		r        stoploss.Rule
		position bool
		want     string
	}{
		{"pos-7", r, true, "pos-7"},
		{"base:WETH", r, false, "base:WETH#sl_1"},
		{"base:WETH", stoploss.Rule{}, false, "base:WETH"},
	} {
		if got := stoploss.MarkKey(tc.target, tc.r, tc.position); got != tc.want {
			t.Errorf("MarkKey(%q, %q, %v) = %q, want %q", tc.target, tc.r.ID, tc.position, got, tc.want)
		}
	}
}
