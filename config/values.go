package config

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/agentwarden/warden"
)

// Value checks shared by sections. Each records a problem that says what is
// allowed, and leaves normalising to the caller.

const wantUSD = "want a USD amount >= 0"

// checkUSD checks that v is a finite dollar amount from 0 to one trillion.
// 0 is legal: it means nothing may be spent.
func (c *checker) checkUSD(v float64, path ...any) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		c.reportf(path, "%s is not a finite number; %s", formatFloat(v), wantUSD)
	case v < 0:
		c.reportf(path, "%s is negative; %s", formatFloat(v), wantUSD)
	default:
		if _, err := warden.USDFromFloat(v); err != nil {
			c.reportf(path, "%s is above the one trillion dollar limit; %s", formatFloat(v), wantUSD)
		}
	}
}

// usdOf converts a checked amount. An amount that somehow fails to convert
// becomes 0, which spends nothing: failing closed.
func usdOf(v float64) warden.USD {
	u, err := warden.USDFromFloat(v)
	if err != nil || u < 0 {
		return 0
	}
	return u
}

// checkTier checks that v is a tier, and that tool "unkill" stays at 4.
func (c *checker) checkTier(tool string, v int, path ...any) {
	switch {
	case v < int(warden.TierReadOnly) || v > int(warden.TierManualOnly):
		c.reportf(path, "%d is not a tier; want 1, 2, 3 or 4", v)
	case tool == unkillTool && warden.Tier(v) != warden.TierManualOnly:
		c.reportf(path, "%s (turning the emergency stop off) is tier 4 and cannot be lowered; want 4", unkillTool)
	}
}

// checkName checks a tool name, token symbol or recipient: non-empty, without
// whitespace. what names the kind of value in the message.
func (c *checker) checkName(s, what string, path ...any) {
	switch {
	case s == "":
		c.reportf(path, "empty %s; want a %s without spaces", what, what)
	case strings.ContainsFunc(s, unicode.IsSpace):
		c.reportf(path, "%s contains whitespace; want a %s without spaces", quote(s), what)
	}
}

// checkPositiveUSD is checkUSD for an amount that must also be above 0.
func (c *checker) checkPositiveUSD(v float64, why string, path ...any) {
	if v == 0 {
		c.reportf(path, "0 is not allowed: %s; want a USD amount above 0", why)
		return
	}
	c.checkUSD(v, path...)
}

// bounds is a range of allowed numbers: from lo to hi, excluding lo when
// loOpen and hi when hiOpen. want says in words what is allowed.
type bounds[N int64 | float64] struct {
	lo, hi         N
	loOpen, hiOpen bool
	want           string
}

// contains reports whether v is a finite number inside b.
func (b bounds[N]) contains(v N) bool {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	return !(v < b.lo || b.loOpen && v == b.lo || v > b.hi || b.hiOpen && v == b.hi)
}

// check records a problem at path when v is outside b.
func (b bounds[N]) check(c *checker, v N, path ...any) {
	if b.contains(v) {
		return
	}
	var shown string
	switch x := any(v).(type) {
	case float64:
		shown = formatFloat(x)
	case int64:
		shown = strconv.FormatInt(x, 10)
	}
	f := float64(v)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		c.reportf(path, "%s is not a finite number; want %s", shown, b.want)
	case v < 0 && b.lo >= 0:
		c.reportf(path, "%s is negative; want %s", shown, b.want)
	case v <= b.lo:
		c.reportf(path, "%s is too small; want %s", shown, b.want)
	default:
		c.reportf(path, "%s is too large; want %s", shown, b.want)
	}
}

// millis converts a checked number of milliseconds.
func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// formatFloat prints v as written in a file: plain decimals, no exponent for
// ordinary amounts.
func formatFloat(v float64) string {
	if math.Abs(v) >= 1e21 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
