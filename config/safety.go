package config

import (
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// safetyFile is the safety section as written in warden.yaml.
type safetyFile struct {
	MaxTransactionAmount float64  `yaml:"maxTransactionAmount" want:"a USD amount (a number >= 0)"`
	DailySpendCap        float64  `yaml:"dailySpendCap" want:"a USD amount (a number >= 0)"`
	KillSwitchActive     bool     `yaml:"killSwitchActive"`
	AllowedTokens        []string `yaml:"allowedTokens" want:"a list of token symbols, e.g. [USDC, ETH]" elem:"a token symbol"`
	BlockedTokens        []string `yaml:"blockedTokens" want:"a list of token symbols, e.g. [SQUID]" elem:"a token symbol"`
	AutopilotEnabled     bool     `yaml:"autopilotEnabled"`
}

var safetySection = &sectionDef[safetyFile]{
	key:        "safety",
	defaultsOf: safetyDefaults,
	check:      checkSafety,
	toRuntime:  safetyToRuntime,
	failClosed: safetyFailClosed,
}

func safetyDefaults() *safetyFile {
	return &safetyFile{
		MaxTransactionAmount: 500,
		DailySpendCap:        2000,
		AllowedTokens:        []string{},
		BlockedTokens:        []string{"SQUID", "SAFEMARS"},
	}
}

func checkSafety(f *safetyFile, c *checker) {
	c.checkUSD(f.MaxTransactionAmount, "maxTransactionAmount")
	c.checkUSD(f.DailySpendCap, "dailySpendCap")
	f.AllowedTokens = c.checkTokens(f.AllowedTokens, "allowedTokens")
	f.BlockedTokens = c.checkTokens(f.BlockedTokens, "blockedTokens")
}

// checkTokens checks token symbols and returns them in upper case.
func (c *checker) checkTokens(tokens []string, key string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		c.checkName(t, "token symbol", key, i)
		out[i] = strings.ToUpper(t)
	}
	return out
}

func safetyToRuntime(f *safetyFile, p *Policy) {
	p.Safety = Safety{
		MaxTransaction: usdOf(f.MaxTransactionAmount),
		DailySpendCap:  usdOf(f.DailySpendCap),
		KillSwitch:     f.KillSwitchActive,
		AllowedTokens:  append([]string{}, f.AllowedTokens...),
		BlockedTokens:  append([]string{}, f.BlockedTokens...),
		Autopilot:      f.AutopilotEnabled,
	}
}

// safetyFailClosed keeps the kill switch on when an invalid safety section
// falls back to its defaults. Falling back must never switch the emergency stop
// off: if the section as written sets killSwitchActive (or a key that is
// evidently a misspelling of it, such as killswitchactive or kill_switch_active)
// to anything YAML reads as true — true, yes, on, y or 1, in any case, quoted or
// not — the fallback keeps the kill switch on. Every other field takes its
// default.
func safetyFailClosed(raw []*yaml.Node, f *safetyFile) string {
	known := fieldNames(reflect.TypeFor[safetyFile]())
	for _, n := range raw {
		if n == nil || n.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || !readsTrue(v.Value) {
				continue
			}
			if k.Value == "killSwitchActive" || suggest(k.Value, known) == "killSwitchActive" {
				f.KillSwitchActive = true
			}
		}
	}
	if f.KillSwitchActive {
		return "the kill switch stays on because the file turns killSwitchActive on"
	}
	return ""
}

// readsTrue reports whether a YAML 1.1 or 1.2 reader could take s as true.
func readsTrue(s string) bool {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "y", "1":
		return true
	}
	return false
}
