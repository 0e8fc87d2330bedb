package config

import "strings"

// suggest returns the candidate that name was most likely meant to be, or ""
// when none is close: the same key in another case or with _ and - removed,
// a prefix of at least four letters, or one or two typing mistakes away.
func suggest(name string, candidates []string) string {
	n := fold(name)
	if n == "" {
		return ""
	}
	best, bestDist := "", 3
	for _, c := range candidates {
		fc := fold(c)
		if fc == n {
			return c
		}
		if len(n) >= 4 && strings.HasPrefix(fc, n) {
			return c
		}
		limit := 2
		if len(fc) < 6 {
			limit = 1
		}
		if d := editDistance(n, fc, limit); d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// fold lower-cases s and drops '_' and '-', so that max_amount_usd,
// maxAmountUSD and max-amount-usd compare equal.
func fold(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "_-") {
		s = strings.NewReplacer("_", "", "-", "").Replace(s)
	}
	return s
}

// editDistance returns the Levenshtein distance between a and b (bytes), or
// limit+1 as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
