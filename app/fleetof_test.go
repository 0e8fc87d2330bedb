package app

import (
	"path/filepath"
	"testing"

	"github.com/agentwarden/warden/config"
)

// TestStoreFlagTakesItsOwnRolesPassword: the policy's store password is
// the role's in store.dsn; --store naming another role (the owner, for
// warden migrate) takes the driver's own password sources, and naming the
// same role keeps the policy's.
func TestStoreFlagTakesItsOwnRolesPassword(t *testing.T) {
	t.Setenv("WARDEN_TEST_PG_PASSWORD", "writer-pw")
	home := Home(filepath.Join(t.TempDir(), "h"))
	p := &config.Policy{Store: config.Store{DSN: "postgres://warden_writer@db.example/warden", PasswordEnv: "WARDEN_TEST_PG_PASSWORD"}}
	for _, c := range []struct {
		override, want string
	}{
		{"", "writer-pw"},
		{"postgres://warden_writer@other.example/warden", "writer-pw"},
		{"postgres://warden_owner@db.example/warden", ""},
	} {
		f, err := fleetOf(home, p, c.override)
		if err != nil || f == nil {
			t.Fatalf("fleetOf(--store %q): %v", c.override, err)
		}
		if f.password != c.want {
			t.Errorf("fleetOf(--store %q) password %q, want %q", c.override, f.password, c.want)
		}
	}
}
