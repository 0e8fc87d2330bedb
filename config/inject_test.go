package config

import (
	"strings"
	"testing"
)

// TestInjectSection: the default withholds at 0.9; a file may set 0.5 to 1;
// anything else is a problem, and the section falls back to the default
// unless the file's value is a stricter (lower) valid one.
func TestInjectSection(t *testing.T) {
	parse := func(text string) (*Policy, []Problem, error) {
		l, err := Parse([]byte(text))
		if err != nil {
			return nil, nil, err
		}
		return l.Policy, l.Problems, nil
	}
	p, problems, err := parse("version: 1\n")
	if err != nil || len(problems) > 0 || p.Inject.BlockScore != DefaultBlockScore {
		t.Fatalf("default: %v %v %v", p.Inject, problems, err)
	}
	p, problems, err = parse("version: 1\ninject:\n  blockScore: 0.7\n")
	if err != nil || len(problems) > 0 || p.Inject.BlockScore != 0.7 {
		t.Fatalf("0.7: %v %v %v", p.Inject, problems, err)
	}
	for _, bad := range []string{"0.2", "1.5", "high", "-1"} {
		p, problems, err = parse("version: 1\ninject:\n  blockScore: " + bad + "\n")
		if err != nil || len(problems) == 0 || !strings.Contains(problems[0].Error(), "blockScore") {
			t.Errorf("blockScore %s: problems %v, err %v; want one naming blockScore", bad, problems, err)
			continue
		}
		if p.Inject.BlockScore != DefaultBlockScore {
			t.Errorf("blockScore %s: fell back to %v, want the default", bad, p.Inject.BlockScore)
		}
	}
	// A stricter valid value survives another problem in the section.
	p, problems, _ = parse("version: 1\ninject:\n  blockScore: 0.6\n  other: 1\n")
	if len(problems) == 0 || p.Inject.BlockScore != 0.6 {
		t.Errorf("a stricter blockScore beside an unknown key: %v, problems %v; want 0.6 kept", p.Inject, problems)
	}
}
