package config

import yaml "go.yaml.in/yaml/v3"

// injectFile is the inject section as written in warden.yaml.
type injectFile struct {
	BlockScore float64 `yaml:"blockScore" want:"a score from 0.5 to 1, e.g. 0.9"`
	RulesFile  string  `yaml:"rulesFile" want:"a file path, absolute or starting with ~/ (\"\" for none)"`
}

// Inject says what happens to a tool's output that reads as a prompt
// injection (the inject section). Every output the hooks and `warden mcp`
// see is scanned (package inject); one scoring 0.5 or more reaches the
// model with a warning, and one scoring BlockScore or more is withheld
// where the host lets warden replace a tool's output (Claude Code's
// PostToolUse, a result through warden mcp). The zero value withholds
// nothing: build one with Load, Parse or Default.
type Inject struct {
	// BlockScore is the injection score at or above which an output is
	// withheld; 0.5 <= BlockScore <= 1 once loaded.
	BlockScore float64
	// RulesFile is a payload database file (the format of
	// inject/payloads.yaml) that extends the shipped one, as written ("~"
	// not expanded); "" for none. A file that cannot be read or holds an
	// invalid rule makes every scan say it could not scan, which warns the
	// model as a finding would.
	RulesFile string
}

// DefaultBlockScore is the inject section's default blockScore: what
// several strong rules agree on, never one weak signal alone.
const DefaultBlockScore = 0.9

var blockScoreBounds = bounds[float64]{lo: 0.5, hi: 1, want: "a score from 0.5 to 1, e.g. 0.9"}

var injectSection = &sectionDef[injectFile]{
	key:        "inject",
	defaultsOf: func() *injectFile { return &injectFile{BlockScore: DefaultBlockScore} },
	check: func(f *injectFile, c *checker) {
		blockScoreBounds.check(c, f.BlockScore, "blockScore")
		if f.RulesFile != "" {
			if why := badHomePath(f.RulesFile); why != "" {
				c.reportf([]any{"rulesFile"}, "rulesFile %s; want the path of a payload database file, absolute or starting with ~/", why)
			}
		}
	},
	toRuntime: func(f *injectFile, p *Policy) { p.Inject = Inject{BlockScore: f.BlockScore, RulesFile: f.RulesFile} },
	// An invalid section keeps a lower (stricter) blockScore the file sets.
	failClosed: func(raw []*yaml.Node, f *injectFile) string {
		return keepStricterLimits(raw, []limit{{"blockScore", &f.BlockScore, blockScoreBounds, true}})
	},
}
