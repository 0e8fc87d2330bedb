package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigSetRefusesAPassphraseFileServeWouldRefuse: a passphrase file open
// to others (mode 0644) or missing is refused by `config set` as `warden
// serve` would refuse it, and the policy file keeps no such path; a 0600
// file is accepted.
func TestConfigSetRefusesAPassphraseFileServeWouldRefuse(t *testing.T) {
	home := initHome(t)
	pass := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pass, []byte("a passphrase\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"open to others", pass, "open to group or others (mode 0644)"},
		{"missing", pass + ".missing", "does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := wardenCmd(home, "config", "set", "signing.passphraseFile", c.path).CombinedOutput()
			if err == nil || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "serve` would refuse it") {
				t.Fatalf("config set signing.passphraseFile %s: %v\n%s; want a refusal saying %q", c.path, err, out, c.want)
			}
			if got, _ := wardenCmd(home, "config", "get", "signing.passphraseFile").Output(); strings.Contains(string(got), c.path) {
				t.Fatalf("the refused path was written: %s", got)
			}
		})
	}
	if err := os.Chmod(pass, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := wardenCmd(home, "config", "set", "signing.passphraseFile", pass).CombinedOutput(); err != nil {
		t.Fatalf("config set with a 0600 file: %v\n%s", err, out)
	}
}
