package shellguard

import (
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/agentwarden/warden/shellguard/walk"
)

// decodeSubst reconstructs code produced inside span by a literal decode
// pipeline (echo LITERAL | base64 -d, | xxd -r -p, | rev), as in
// eval "$(echo … | base64 -d)". It reports false when the pipeline is
// anything else.
func (c *ctx) decodeSubst(span walk.Span) (string, bool) {
	var stages []*walk.Command
	for i := range c.walk.Commands {
		cmd := &c.walk.Commands[i]
		if cmd.Span.Start >= span.Start && cmd.Span.End <= span.End && cmd.Via == "$()" {
			stages = append(stages, cmd)
		}
	}
	if len(stages) < 2 {
		return "", false
	}
	sort.Slice(stages, func(i, j int) bool { return stages[i].PipePos < stages[j].PipePos })
	first := stages[0]
	for _, s := range stages {
		if s.Pipeline != first.Pipeline || len(s.Argv) == 0 || s.Argv[0].Dynamic {
			return "", false
		}
	}
	name := progName(first.Argv[0].Value)
	if name != "echo" && name != "printf" {
		return "", false
	}
	var parts []string
	for _, w := range first.Argv[1:] {
		if w.Dynamic {
			return "", false
		}
		if name == "echo" && (w.Value == "-n" || w.Value == "-e") {
			continue
		}
		parts = append(parts, w.Value)
	}
	text := strings.Join(parts, " ")
	for _, s := range stages[1:] {
		var ok bool
		if text, ok = decodeStage(s, text); !ok {
			return "", false
		}
	}
	return text, true
}

// decodeStage applies one decoder to its literal input.
func decodeStage(cmd *walk.Command, in string) (string, bool) {
	args := make([]string, 0, len(cmd.Argv)-1)
	for _, w := range cmd.Argv[1:] {
		if w.Dynamic {
			return "", false
		}
		args = append(args, w.Value)
	}
	has := func(vs ...string) bool {
		for _, a := range args {
			for _, v := range vs {
				if a == v {
					return true
				}
			}
		}
		return false
	}
	switch progName(cmd.Argv[0].Value) {
	case "base64":
		if !has("-d", "--decode", "-D") {
			return "", false
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(in))
		return string(b), err == nil
	case "xxd":
		if !(has("-r", "-revert") && has("-p", "-ps", "-plain", "-postscript") || has("-rp", "-pr", "-rps")) {
			return "", false
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(in), ""))
		return string(b), err == nil
	case "rev":
		r := []rune(in)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), true
	}
	return "", false
}
