package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBytes reads a size such as "64M", "1G", "512k" or "1048576" (binary
// units: k = 1024). It rejects negative, fractional and overflowing sizes.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if n := len(t); n > 0 {
		unit := strings.ToUpper(t[n-1:])
		if unit == "B" && n > 1 {
			t, unit = t[:n-1], strings.ToUpper(t[n-2:n-1])
			n--
		}
		switch unit {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size; write a whole number of bytes with an optional k, M or G suffix, like 64M", s)
	}
	if v > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return v * mult, nil
}

// FormatBytes writes a size the way ParseBytes reads it, in the largest
// unit that divides it exactly.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
