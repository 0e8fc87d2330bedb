package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentwarden/warden/sandbox"
)

// TestMain lets the test binary act as the warden binary: testscript runs
// "warden" in scripts, and the process tests exec os.Args[0] with WARDEN_AS_CLI.
func TestMain(m *testing.M) {
	sandbox.Main()
	if os.Getenv("WARDEN_AS_CLI") == "1" {
		os.Exit(Run())
	}
	testscript.Main(m, map[string]func(){
		"warden": func() { os.Exit(Run()) },
	})
}

// TestScripts runs the CLI golden tests in testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("WARDEN_HOME", filepath.Join(env.WorkDir, "home"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond != "sandbox" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			return slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard), nil
		},
	})
}
