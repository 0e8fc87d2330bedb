package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"httpserve": httpServe,
			"exitcode":  exitCode,
		},
		Condition: func(cond string) (bool, error) {
			if cond != "sandbox" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			return slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard), nil
		},
	})
}

// httpServe starts a web server on the host's loopback for the script and
// sets $NAME_ADDR to its HOST:PORT and $NAME_PORT to its port: "/" answers
// "hello from NAME", "/redirect" sends the client to the cloud metadata
// address, and "/echo" answers with the Authorization header it got (in the
// body and in X-Echo) and whether it held the real $API_TOKEN.
func httpServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpserve NAME")
	}
	name := args[0]
	token := ts.Getenv("API_TOKEN")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo" {
			auth := r.Header.Get("Authorization")
			w.Header().Set("X-Echo", auth)
			fmt.Fprintf(w, "auth=%s\nreal=%v\n", auth, token != "" && strings.Contains(auth, token))
			return
		}
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "hello from %s\n", name)
	}))
	ts.Defer(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	ts.Setenv(name+"_ADDR", addr)
	ts.Setenv(name+"_PORT", addr[strings.LastIndex(addr, ":")+1:])
}

// exitCode runs PROG ARGS… as exec does and fails unless it exits with
// status N: `exitcode 2 warden chek`. Its output is then checked with
// stdout and stderr as after exec.
func exitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}
