package safety

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestTxMax(t *testing.T) {
	cases := []struct {
		name   string
		max    string
		amount string
		want   warden.Verdict
	}{
		{"not fund-moving", "500", "", warden.Allow},
		{"below", "500", "499.99", warden.Allow},
		{"boundary is inclusive", "500", "500.00", warden.Allow},
		{"one cent over", "500", "500.01", warden.Deny},
		{"one micro-dollar over", "500", "500.000001", warden.Deny},
		{"zero max allows zero", "0", "0", warden.Allow},
		{"zero max denies a cent", "0", "0.01", warden.Deny},
		{"malformed amount", "500", `"1,000"`, warden.Deny},
		{"seven decimals refused", "500", "1.0000001", warden.Deny},
		{"huge amount", "500", "99999999999999999999", warden.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var params map[string]string
			if c.amount != "" {
				params = map[string]string{"amount_usd": c.amount}
			}
			d, err := check(t, TxMax{Max: usd(t, c.max)}, req(2, false, params))
			if err != nil || d.Verdict != c.want {
				t.Fatalf("TxMax{%s}.Check(%s) = %v, %v (%s); want %v", c.max, c.amount, d.Verdict, err, d.Reason, c.want)
			}
		})
	}
}
