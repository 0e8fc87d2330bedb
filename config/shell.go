package config

import "strings"

// shellFile is the shell section as written in warden.yaml.
type shellFile struct {
	AllowTaskRunners bool              `yaml:"allow_task_runners"`
	Safe             []string          `yaml:"safe" want:"a list of command prefixes, e.g. [\"kubectl get\"]" elem:"a command prefix"`
	Suspicious       []string          `yaml:"suspicious" want:"a list of command prefixes" elem:"a command prefix"`
	Destructive      []string          `yaml:"destructive" want:"a list of command prefixes" elem:"a command prefix"`
	Replacements     []replacementFile `yaml:"replacements" want:"a list of {from: PREFIX, to: PREFIX}"`
	Host             []string          `yaml:"host" want:"a list of command prefixes, e.g. [\"git push\"]" elem:"a command prefix"`
}

type replacementFile struct {
	From string `yaml:"from" want:"a command prefix, e.g. npm install"`
	To   string `yaml:"to" want:"a command prefix, e.g. bun install"`
}

var shellSection = &sectionDef[shellFile]{
	key: "shell",
	defaultsOf: func() *shellFile {
		return &shellFile{AllowTaskRunners: true, Safe: []string{}, Suspicious: []string{}, Destructive: []string{}, Host: []string{}}
	},
	check:     checkShell,
	toRuntime: shellToRuntime,
}

func checkShell(f *shellFile, c *checker) {
	for _, list := range []struct {
		key   string
		items []string
	}{{"safe", f.Safe}, {"suspicious", f.Suspicious}, {"destructive", f.Destructive}, {"host", f.Host}} {
		for i, p := range list.items {
			checkPrefix(c, p, list.key, i)
		}
	}
	for i, r := range f.Replacements {
		checkPrefix(c, r.From, "replacements", i, "from")
		checkPrefix(c, r.To, "replacements", i, "to")
	}
}

// checkPrefix accepts a non-empty command prefix of printable words.
func checkPrefix(c *checker, p string, path ...any) {
	if strings.TrimSpace(p) == "" {
		c.reportf(path, "empty command prefix; want words such as \"kubectl get\"")
		return
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			c.reportf(path, "command prefix %q has a control character", p)
			return
		}
	}
}

func shellToRuntime(f *shellFile, p *Policy) {
	s := Shell{
		AllowTaskRunners: f.AllowTaskRunners,
		Safe:             normalizePrefixes(f.Safe),
		Suspicious:       normalizePrefixes(f.Suspicious),
		Destructive:      normalizePrefixes(f.Destructive),
		Host:             normalizePrefixes(f.Host),
	}
	for _, r := range f.Replacements {
		s.Replacements = append(s.Replacements, Replacement{From: strings.Join(strings.Fields(r.From), " "), To: strings.Join(strings.Fields(r.To), " ")})
	}
	p.Shell = s
}

func normalizePrefixes(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.Join(strings.Fields(p), " ")
	}
	return out
}
