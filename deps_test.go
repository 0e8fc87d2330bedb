package warden_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavyInit are packages (each with the packages under it) whose package
// init costs every warden process about 0.3 ms before main
// (docs/benchmarks.md, "Whole-process warden check (cold start)"): a hook
// runs once per agent tool call, so the warden binary must not link them.
// signing/keystore writes its own key files and transaction encoding so
// that it needs only go-ethereum's crypto, common and rlp.
var heavyInit = []string{
	"github.com/ethereum/go-ethereum/core/types",
	"github.com/ethereum/go-ethereum/params",
	"github.com/ethereum/go-ethereum/crypto/kzg4844",
	"github.com/consensys/gnark-crypto",
}

// TestNoHeavyInitInWarden fails for each entry of heavyInit that cmd/warden
// links, naming the packages outside it that import it.
func TestNoHeavyInitInWarden(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./cmd/warden").Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/warden: %v", err)
	}
	// entry is the heavyInit entry pkg is or is under, or "".
	entry := func(pkg string) string {
		for _, h := range heavyInit {
			if pkg == h || strings.HasPrefix(pkg, h+"/") {
				return h
			}
		}
		return ""
	}
	importers := map[string][]string{} // linked entry -> importers outside it
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		if e := entry(pkg); e != "" && importers[e] == nil {
			importers[e] = []string{}
		}
		for _, imp := range fields[1:] {
			if e := entry(imp); e != "" && e != entry(pkg) && !slices.Contains(importers[e], pkg) {
				importers[e] = append(importers[e], pkg)
			}
		}
	}
	for _, h := range heavyInit {
		if from, linked := importers[h]; linked {
			t.Errorf("cmd/warden links %s (imported by %s); its package init costs every warden process, hooks included, about 0.3 ms before main (docs/benchmarks.md, cold start)",
				h, strings.Join(from, ", "))
		}
	}
}
