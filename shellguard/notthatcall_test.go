package shellguard

import (
	"testing"

	"github.com/agentwarden/warden"
)

// TestPlatformSystemIsNotAShellOut: platform.system() names the OS and is
// no shell-out; but only that call of the real platform module is let
// through. Another function of a compute-only module with a shell-out's
// name (platform.popen ran a shell before Python 3.8), and code that binds
// the name platform to another module or changes what it holds in any way
// (an annotated or unpacked assignment, a loop variable, a parameter,
// setattr, vars, sys.modules), still runs the code in the guard sandbox.
func TestPlatformSystemIsNotAShellOut(t *testing.T) {
	for _, code := range []string{
		`import sys, platform; print(platform.system(), sys.platform)`,
		`import platform; print(platform.system(), platform.machine(), platform.python_version())`,
		`import json, platform
print(json.dumps({"os": platform.system()}))`,
	} {
		cmd := "python3 -c '" + code + "'"
		if r := Classify(cmd, corpusEnv, defaultPolicy()); r.Verdict != warden.Allow || r.Rule == "shell.interp.shell_out" {
			t.Errorf("Classify(%q) = %v (%s), want allow", cmd, r.Verdict, r.Rule)
		}
	}
	for _, code := range []string{
		`import platform; platform.popen(input())`,
		`import os; platform: object = os; platform.system(input())`,
		`import os; (platform := os); platform.system(input())`,
		`import os; platform, x = os, 1; platform.system(input())`,
		`import os; [platform] = [os]; platform.system(input())`,
		`import os; f = lambda platform: platform.system(input()); f(os)`,
		`import os
for platform in [os]: platform.system(input())`,
		"import os as\tplatform; platform.system(input())",
		`import os
platform\
= os
platform.system(input())`,
		`import platform, os; platform.system = os.system; platform.system(input())`,
		`import platform, os; platform.__setattr__("system", os.system); platform.system(input())`,
		`import platform, os; vars(platform).update(vars(os)); platform.system(input())`,
		`import sys, os; sys.modules["platform"] = os; import platform; platform.system(input())`,
		`from os import system as platform; import platform; platform.system(input())`,
		`import math, os; math.system = os.system; math.system(input())`,
	} {
		cmd := "python3 -c '" + code + "'"
		if r := Classify(cmd, corpusEnv, defaultPolicy()); r.Verdict != warden.Sandbox {
			t.Errorf("Classify(%q) = %v (%s), want sandbox (a shell-out)", cmd, r.Verdict, r.Rule)
		}
	}
}
