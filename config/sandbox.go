package config

import (
	"slices"
	"strings"
)

// sandboxFile is the sandbox section as written in warden.yaml. The sandbox
// engine (profiles, limits, long-lived sandboxes) fills in the rest of this
// section; for now it says whether a sandbox verdict can be honoured.
type sandboxFile struct {
	Mode   string `yaml:"mode" want:"one of off, light, standard, max"`
	Engine string `yaml:"engine" want:"one of auto, native, docker"`
}

// Sandbox modes and engines.
var (
	SandboxModes   = []string{"off", "light", "standard", "max"}
	SandboxEngines = []string{"auto", "native", "docker"}
)

var sandboxSection = &sectionDef[sandboxFile]{
	key:        "sandbox",
	defaultsOf: func() *sandboxFile { return &sandboxFile{Mode: "standard", Engine: "auto"} },
	check: func(f *sandboxFile, c *checker) {
		f.Mode, f.Engine = strings.ToLower(f.Mode), strings.ToLower(f.Engine)
		if !slices.Contains(SandboxModes, f.Mode) {
			c.reportf([]any{"mode"}, "%q is not a sandbox mode; want one of %s", f.Mode, strings.Join(SandboxModes, ", "))
		}
		if !slices.Contains(SandboxEngines, f.Engine) {
			c.reportf([]any{"engine"}, "%q is not a sandbox engine; want one of %s", f.Engine, strings.Join(SandboxEngines, ", "))
		}
	},
	toRuntime: func(f *sandboxFile, p *Policy) { p.Sandbox = Sandbox{Mode: f.Mode, Engine: f.Engine} },
}
