package sqlite

import (
	"fmt"
	"os"
	"testing"
)

// childEnv selects a child-process role (see child_test.go) when the test binary
// re-executes itself.
const childEnv = "WARDEN_SQLITE_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role, os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
