package proc

import (
	"os"
	"runtime"
	"testing"
)

func TestStartNamesThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc here")
	}
	a, ok := Start(os.Getpid())
	b, ok2 := Start(os.Getpid())
	if !ok || !ok2 || a == "" || a != b {
		t.Fatalf("Start(self) = %q, %v then %q, %v", a, ok, b, ok2)
	}
	if _, ok := Start(1 << 30); ok {
		t.Error("Start of a pid that does not exist reports one")
	}
}
