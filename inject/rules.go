package inject

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Category is the kind of attack a rule detects.
type Category string

// The categories of the payload database.
const (
	Override      Category = "override"      // "ignore previous instructions", new instructions
	Impersonation Category = "impersonation" // role or system impersonation: fake system, admin, developer
	Exfiltration  Category = "exfiltration"  // reveal the prompt, secrets or data; send them somewhere
	ToolCoercion  Category = "tool_coercion" // make the agent call a tool, run a command, add code
	Financial     Category = "financial"     // move money, change a payee, approve a payment
	Delimiter     Category = "delimiter"     // close a fence, fake a chat template or an end of data
	Encoded       Category = "encoded"       // hidden or encoded text: tags, base64, reversed, leetspeak
	Multilingual  Category = "multilingual"  // any of the above in another language
)

var knownCategories = map[Category]bool{Override: true, Impersonation: true, Exfiltration: true,
	ToolCoercion: true, Financial: true, Delimiter: true, Encoded: true, Multilingual: true}

// Rule is one entry of the payload database: a pattern over the scan view
// (Normalize's output, so lower-case, NFKC, look-alikes folded) and the score
// a match adds. Positives must match it and Negatives must not; both are
// checked when the rule is loaded.
type Rule struct {
	ID       string   `yaml:"id"`
	Category Category `yaml:"category"`
	Score    float64  `yaml:"score"`
	Pattern  string   `yaml:"pattern"`
	// Why says what the rule catches, for a person reading a finding.
	Why       string   `yaml:"why"`
	Positives []string `yaml:"positives"`
	Negatives []string `yaml:"negatives"`
	// Negatable drops a match that a negation ("never", "do not", "must
	// not"…) precedes in the same sentence: "never reveal the password"
	// is a defence, not an attack.
	Negatable bool `yaml:"negatable"`

	re *regexp.Regexp
}

// ruleFile is the file form of a payload database.
type ruleFile struct {
	Version int    `yaml:"version"`
	Rules   []Rule `yaml:"rules"`
}

//go:embed payloads.yaml
var payloadsYAML []byte

var (
	defaultOnce  sync.Once
	defaultRules []Rule
	defaultErr   error
)

// DefaultRules returns the payload database shipped with warden. An error
// means the shipped database is broken (a build defect); the caller must not
// scan without it.
func DefaultRules() ([]Rule, error) {
	defaultOnce.Do(func() {
		defaultRules, defaultErr = ParseRules(payloadsYAML, "payloads.yaml")
	})
	return defaultRules, defaultErr
}

// ParseRules reads a payload database (version: 1, rules: […]) strictly: an
// unknown key, a rule without id, category, score or pattern, an unknown
// category, a pattern that does not compile, a duplicate id, a positive
// example the pattern misses or a negative one it matches is an error naming
// the rule and, for YAML errors, the line.
func ParseRules(data []byte, name string) ([]Rule, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f ruleFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty payload database; want `version: 1` and `rules:`", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: version %d is not supported; want `version: 1`", name, f.Version)
	}
	return compileRules(f.Rules, name)
}

// compileRules validates and compiles rules.
func compileRules(rules []Rule, name string) ([]Rule, error) {
	seen := map[string]bool{}
	out := make([]Rule, 0, len(rules))
	for i, r := range rules {
		where := fmt.Sprintf("%s: rule %d", name, i+1)
		if r.ID != "" {
			where = fmt.Sprintf("%s: rule %q", name, r.ID)
		}
		switch {
		case r.ID == "":
			return nil, fmt.Errorf("%s: has no id", where)
		case seen[r.ID]:
			return nil, fmt.Errorf("%s: the id is used twice; ids must be unique", where)
		case !knownCategories[r.Category]:
			return nil, fmt.Errorf("%s: unknown category %q; use one of %s", where, r.Category, categoryList())
		case r.Score <= 0 || r.Score > 1:
			return nil, fmt.Errorf("%s: score %v is out of range; use a number in (0, 1]", where, r.Score)
		case r.Pattern == "":
			return nil, fmt.Errorf("%s: has no pattern", where)
		}
		seen[r.ID] = true
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: pattern does not compile (RE2 syntax): %w", where, err)
		}
		r.re = re
		for _, p := range r.Positives {
			if len(r.find(Normalize(p), 1)) == 0 {
				return nil, fmt.Errorf("%s: positive example %q does not match the pattern", where, p)
			}
		}
		for _, n := range r.Negatives {
			if len(r.find(Normalize(n), 1)) > 0 {
				return nil, fmt.Errorf("%s: negative example %q matches the pattern", where, n)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func categoryList() string {
	return strings.Join([]string{string(Override), string(Impersonation), string(Exfiltration),
		string(ToolCoercion), string(Financial), string(Delimiter), string(Encoded), string(Multilingual)}, ", ")
}

// find returns up to n matches of r in the scan-view text t, without the
// negated ones when r is negatable.
func (r *Rule) find(t string, n int) [][]int {
	locs := r.re.FindAllStringIndex(t, n)
	if !r.Negatable {
		return locs
	}
	out := locs[:0]
	for _, loc := range locs {
		if !negated(t, loc[0]) {
			out = append(out, loc)
		}
	}
	return out
}

// negation is a word that turns an instruction into a prohibition.
var negation = lazyRegexp(`\b(never|not|don't|dont|do not|cannot|can't|won't|must not|mustn't|shouldn't|no one|nobody|refuse to|under no circumstances|avoid|without|if|unless|when|whenever|then|otherwise|else)\b`)

// negated reports whether a negation precedes position i of t within its
// sentence (and at most 60 bytes back).
func negated(t string, i int) bool {
	start := max(0, i-60)
	seg := t[start:i]
	if k := strings.LastIndexAny(seg, ".!?\n;"); k >= 0 {
		seg = seg[k+1:]
	}
	return negation().MatchString(seg)
}
