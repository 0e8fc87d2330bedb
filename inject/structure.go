package inject

import "strings"

// Structural signals that need no payload database.

// minRepeats is how many times in a row one token must repeat to count as
// padding: a repeated-token attack pushes earlier instructions out of the
// model's attention or context.
const minRepeats = 20

// repeatedTokens finds runs of one token repeated minRepeats times or more
// in the scan view.
func repeatedTokens(v view) []Match {
	var ms []Match
	fields := fieldSpans(v.text)
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && v.text[fields[j][0]:fields[j][1]] == v.text[fields[i][0]:fields[i][1]] {
			j++
		}
		if j-i >= minRepeats && strings.TrimSpace(v.text[fields[i][0]:fields[i][1]]) != "" && !isNumber(v.text[fields[i][0]:fields[i][1]]) {
			ms = append(ms, Match{Rule: "structure.repeated-token", Category: Delimiter, Score: 0.5,
				Span: v.span(fields[i][0], fields[j-1][1]), View: "text",
				Why: "one token repeated many times, padding that pushes earlier instructions out of view"})
		}
		i = j
	}
	return ms
}

// fieldSpans returns the byte ranges of the space-separated fields of s.
func fieldSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\n' {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

func isNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' && s[i] != ',' {
			return false
		}
	}
	return true
}
