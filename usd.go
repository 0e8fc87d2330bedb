package warden

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// USD is an amount of US dollars in micro-dollars (1e-6 USD), so caps and sums are
// exact integers. The zero value is $0.
type USD int64

// MicrosPerDollar is the number of USD units in one dollar.
const MicrosPerDollar = 1_000_000

// maxUSD bounds parsed amounts so sums of many amounts cannot overflow int64.
const maxUSD = USD(1_000_000_000_000 * MicrosPerDollar) // one trillion dollars

// Dollars returns the amount as a float, for display and JSON only.
func (u USD) Dollars() float64 { return float64(u) / MicrosPerDollar }

// String formats the amount as dollars with up to six decimals, e.g. "500" or "500.01".
func (u USD) String() string {
	neg := u < 0
	if neg {
		u = -u
	}
	s := strconv.FormatInt(int64(u/MicrosPerDollar), 10)
	if frac := int64(u % MicrosPerDollar); frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ErrBadAmount is wrapped by every amount parse error.
var ErrBadAmount = errors.New("invalid USD amount")

// ParseUSD reads a non-negative decimal dollar amount such as "500", "500.01" or
// "0.000001". More than six decimals, signs, exponents, NaN and amounts above one
// trillion dollars are refused rather than rounded.
func ParseUSD(s string) (USD, error) {
	bad := func(why string) (USD, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrBadAmount, s, why)
	}
	if s == "" {
		return bad("empty")
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return bad("no digits")
	}
	if hasDot && frac == "" {
		return bad("no digits after the decimal point")
	}
	if len(frac) > 6 {
		return bad("more than 6 decimal places")
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return bad("want a plain non-negative decimal number like 12.50")
		}
	}
	if len(whole) > 13 {
		return bad("above the one trillion dollar limit")
	}
	var w int64
	if whole != "" {
		w, _ = strconv.ParseInt(whole, 10, 64)
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	u := USD(w*MicrosPerDollar + f)
	if u > maxUSD {
		return bad("above the one trillion dollar limit")
	}
	return u, nil
}

// ParseUSDJSON reads an amount given as a JSON number or a JSON string.
func ParseUSDJSON(raw json.RawMessage) (USD, error) {
	var s string
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrBadAmount, err)
		}
	} else {
		s = strings.TrimSpace(string(raw))
	}
	return ParseUSD(s)
}

// USDFromFloat converts a configured dollar figure (from YAML) to USD, rounding to
// the nearest micro-dollar. NaN, infinities and out-of-range values are errors.
func USDFromFloat(f float64) (USD, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > float64(maxUSD/MicrosPerDollar) {
		return 0, fmt.Errorf("%w: %v is not a finite amount up to one trillion", ErrBadAmount, f)
	}
	return USD(math.Round(f * MicrosPerDollar)), nil
}

// MarshalJSON encodes the amount as a JSON number of dollars.
func (u USD) MarshalJSON() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalJSON reads an amount written by MarshalJSON: a JSON number (or
// string) of dollars with up to six decimals, possibly negative.
func (u *USD) UnmarshalJSON(b []byte) error {
	raw := json.RawMessage(b)
	neg := false
	if s := strings.TrimSpace(string(b)); strings.HasPrefix(s, "-") {
		neg, raw = true, json.RawMessage(s[1:])
	} else if strings.HasPrefix(s, `"-`) {
		neg, raw = true, json.RawMessage(`"`+s[2:])
	}
	v, err := ParseUSDJSON(raw)
	if err != nil {
		return err
	}
	if neg {
		v = -v
	}
	*u = v
	return nil
}
