package walk

import (
	"testing"
	"time"
)

// FuzzWalk checks that Walk never panics, answers within a second, and
// keeps to its depth budget whatever the input.
func FuzzWalk(f *testing.F) {
	for _, tc := range walkCases {
		f.Add(tc.src)
	}
	f.Add(`:(){ :|:& };:`)
	f.Add(`echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}`)
	f.Add(`bash -c "bash -c \"bash -c 'bash -c x'\""`)
	f.Add("cat <<E | base64 -d | rev | sh\nE\n")
	f.Add(`a=(b 'c d' {x,y}); a+=(e); a[1]=f; IFS=,; rm -- "${a[@]}" ${a[*]} "${a[*]}" ${#a[@]} ${a[1]} ${#a[2]}`)
	f.Add(`trap 'x=/' DEBUG; declare -n r=x; PS4='${x:=/}'; let 'a[1]=2'; : ${!r:=y}; cd "$x"`)
	f.Fuzz(func(t *testing.T, src string) {
		opt := Options{Cwd: "/w", Home: "/h", MaxDepth: 4}
		start := time.Now()
		r := Walk(src, opt)
		if d := time.Since(start); d > time.Second {
			// once more, so that a busy machine is not taken for a hang
			start = time.Now()
			r = Walk(src, opt)
			if d := time.Since(start); d > time.Second {
				t.Errorf("Walk(%q) took %v, want under 1s", src, d)
			}
		}
		for _, is := range r.Issues {
			if is.Kind == Internal {
				t.Errorf("Walk(%q) = internal issue %q, want none", src, is.Message)
			}
		}
		for _, c := range r.Commands {
			if c.Depth > opt.MaxDepth {
				t.Errorf("Walk(%q) = command at depth %d, want at most %d", src, c.Depth, opt.MaxDepth)
			}
		}
		if len(src) > defaultMaxBytes && !hasIssue(r, BudgetExceeded) {
			t.Errorf("Walk(%d bytes) = no budget issue, want %s", len(src), BudgetExceeded)
		}
	})
}
