package safety

import (
	"context"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// A protective exit (set only in-process by the stop-loss monitor) asks a
// human while the kill switch is on, unless the policy says exits deny too,
// and is never answered by a standing grant.
func TestKillSwitchParksProtectiveExits(t *testing.T) {
	r := req(3, true, map[string]string{"amount_usd": `"800"`})
	r.Protective = true
	d, err := check(t, KillSwitch{Active: true}, r)
	if err != nil || d.Verdict != warden.Ask || !d.ManualOnly {
		t.Fatalf("KillSwitch{on}.Check(protective exit) = %v manual=%v, %v; want ask, manual only", d.Verdict, d.ManualOnly, err)
	}
	if d, _ := check(t, KillSwitch{Active: true, ExitsDeny: true}, r); d.Verdict != warden.Deny {
		t.Errorf("KillSwitch{on, exits deny}.Check(protective exit) = %v, want deny", d.Verdict)
	}
	if d, _ := check(t, KillSwitch{}, r); d.Verdict != warden.Allow {
		t.Errorf("KillSwitch{off}.Check(protective exit) = %v, want allow", d.Verdict)
	}
	r.Protective = false
	if d, _ := check(t, KillSwitch{Active: true}, r); d.Verdict != warden.Deny {
		t.Errorf("KillSwitch{on}.Check(agent sell) = %v, want deny", d.Verdict)
	}
}

// A protective exit moves funds back into the own wallet: the per-transaction
// max and the daily cap do not hold it, and it debits nothing. The same
// amount from an agent is held.
func TestProtectiveExitsSpendNothing(t *testing.T) {
	full := ledgerFunc(func(_ context.Context, _ time.Time) (warden.USD, error) { return usd(t, "1900"), nil })
	for _, protective := range []bool{true, false} {
		r := req(3, true, map[string]string{"amount_usd": `"3000"`})
		r.Protective = protective
		want := warden.Deny
		if protective {
			want = warden.Allow
		}
		if d, err := check(t, TxMax{Max: usd(t, "500")}, r); err != nil || d.Verdict != want {
			t.Errorf("TxMax.Check($3000, protective %v) = %v, %v; want %v", protective, d.Verdict, err, want)
		}
		cap := SpendCap{Cap: usd(t, "2000"), Ledger: full}
		if d, err := check(t, cap, r); err != nil || d.Verdict != want {
			t.Errorf("SpendCap.Check($3000, protective %v) = %v, %v; want %v", protective, d.Verdict, err, want)
		}
		if debit := cap.Debit(r, time.Now()); (debit == nil) != protective {
			t.Errorf("SpendCap.Debit(protective %v) = %+v", protective, debit)
		}
	}
}

// The stop-loss monitor runs on no one's turn; its protective exits carry
// out rules a human set, so the autopilot switch does not hold them back.
func TestTierGatePassesProtectiveExits(t *testing.T) {
	r := req(3, true, nil)
	r.Protective = true
	if d, err := check(t, TierGate{}, r); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("TierGate{}.Check(protective exit) = %v, %v; want allow", d.Verdict, err)
	}
	r.Protective = false
	if d, _ := check(t, TierGate{}, r); d.Verdict != warden.Deny {
		t.Fatalf("TierGate{}.Check(autonomous tier 3) = %v; want deny", d.Verdict)
	}
}
