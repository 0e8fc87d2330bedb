package shellguard

import (
	"fmt"
	"strings"
)

// Explain renders a Result for `warden shell explain`: the verdict, the
// deciding rule and the trace of parsed commands, zones and rules.
func (r Result) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s\nrule: %s\nreason: %s\n", r.Verdict, r.Rule, r.Reason)
	if r.Suggestion != "" {
		fmt.Fprintf(&b, "suggestion: %s\n", r.Suggestion)
	}
	if r.Rewrite != "" {
		fmt.Fprintf(&b, "rewrite: %s\n", r.Rewrite)
	}
	for _, t := range r.Trace {
		fmt.Fprintf(&b, "  %s\n", t)
	}
	return b.String()
}
