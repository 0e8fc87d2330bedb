package safety

import (
	"fmt"

	"github.com/agentwarden/warden"
)

// fundAmount reads the request's amount_usd. ok is false when the request does
// not move funds. A present but malformed amount yields a deny decision in bad.
func fundAmount(req *warden.Request, rule string) (amount warden.USD, ok bool, bad *warden.Decision) {
	amount, ok, err := req.AmountUSD()
	if err != nil {
		d := warden.Denyf(rule, fmt.Sprintf("params.%s is not a valid amount (%v); send a plain decimal like 125.50", warden.ParamAmountUSD, err))
		return 0, true, &d
	}
	return amount, ok, nil
}
