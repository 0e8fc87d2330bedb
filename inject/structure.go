package inject

import (
	"regexp"
	"strings"
	"sync"
)

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

// A request to an assistant standing as a line of its own inside a record
// (an email, a message, a form) is a goal the data hands the model: the
// "embedded goal" of BIPIA's email attacks, a question or a task that has
// nothing to do with the message around it, often spliced into the middle
// of one of its sentences. A person writing to a person asks "Can you send
// the report?"; these ask what an assistant is asked ("How do I back up my
// documents folder?", "Write a script to…", "Is this feedback positive?").
// The patterns are compiled on first use: every warden process links this
// package, and most never scan.
var (
	// recordMarks says a text is a record: header fields or a greeting.
	recordMarks = lazyRegexp(`(^|\n|\|)\s*(subject|email_from|from|to|cc|received date|content|date)\s*:|(^|\n)\s*(hi|hello|dear)\s+\pL+`)
	// assistantTask is a line that gives an assistant a task (one that
	// does not speak to its reader: "Write to us at…" is a person's).
	assistantTask = lazyRegexp(`^(write |provide |show me |give me |tell me |explain |describe |summari[sz]e |analy[sz]e |determine |generate |compose |translate |suggest |calculate |help me |recommend |outline |draft |compare |identify |evaluate |discuss |classify |rewrite |paraphrase |predict |estimate |assess )`)
	// assistantQuestion is a line that is one question, ending in "?" or
	// in a quoted passage the question is about, of the kinds put to an
	// assistant: how, what, why or which, not addressed to the reader (a
	// person writing to a person asks "What time suits you?"), or asking
	// it to judge or transform something. (Lengths are checked by the
	// caller: counted repetition would make a large program.)
	assistantQuestion = lazyRegexp(`^((how|what|why|which)\b|(is|are|does|do) (this|these|the following|that)\b|(can|could|would) you (please )?(classify|translate|summari[sz]e|analy[sz]e|explain|describe|write|generate|list|tell me|rewrite|paraphrase|convert|determine|identify|calculate|suggest|recommend|compose|create|draft|give me|provide|name|find|evaluate|assess|predict|estimate|compare|outline|use|reply|respond|answer|render|encode|encrypt|substitute|invert|reverse)\b)[^?\n]+\?(['"]|\s+['"‘“].*)?$`)
	// addressed says a question speaks to its reader.
	addressed = lazyRegexp(`\b(you|your|yours|we|us|our)\b`)
)

// lazyRegexp compiles pattern on its first use.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// splicedRequests finds, in a record, lines that give an assistant a task
// or ask it a question: 20 to 300 bytes, four words or more.
func splicedRequests(v view) []Match {
	if !recordMarks().MatchString(v.text) {
		return nil
	}
	var ms []Match
	for start := 0; start < len(v.text); {
		end := strings.IndexByte(v.text[start:], '\n')
		if end < 0 {
			end = len(v.text)
		} else {
			end += start
		}
		a, b := start, end
		for a < b && v.text[a] == ' ' {
			a++
		}
		for b > a && v.text[b-1] == ' ' {
			b--
		}
		line := v.text[a:b]
		if len(line) >= 20 && len(line) <= 300 && len(strings.Fields(line)) >= 4 &&
			(assistantTask().MatchString(line) && !addressed().MatchString(line) || assistantQuestion().MatchString(line) &&
				(!addressed().MatchString(line) || strings.HasPrefix(line, "can you") || strings.HasPrefix(line, "could you") || strings.HasPrefix(line, "would you"))) {
			ms = append(ms, Match{Rule: "structure.spliced-request", Category: Override, Score: 0.5,
				Span: v.span(a, b), View: "text",
				Why: "a task or question for an assistant standing as a line of its own in a message: a goal the data gives the model"})
		}
		start = end + 1
	}
	return ms
}
