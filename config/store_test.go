package config

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestStoreSection(t *testing.T) {
	l := mustParse(t, "version: 1\nstore:\n  dsn: postgres://warden@db.internal:5432/warden?sslmode=verify-full\n  passwordEnv: WARDEN_PG_PASSWORD\n  keyFile: ~/.config/warden/fleet.key\n")
	if len(l.Problems) > 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	want := Store{DSN: "postgres://warden@db.internal:5432/warden?sslmode=verify-full", PasswordEnv: "WARDEN_PG_PASSWORD", KeyFile: "~/.config/warden/fleet.key"}
	if l.Policy.Store != want {
		t.Errorf("Store = %+v, want %+v", l.Policy.Store, want)
	}
	if d := mustParse(t, "version: 1\n").Policy.Store; d != (Store{}) {
		t.Errorf("default Store = %+v, want the zero value (the home's SQLite)", d)
	}
}

// TestStoreRefusals: a store section that cannot be read stops every
// decision (Invalid), and a password written into the DSN is never quoted
// back in the problem, which is logged and audited.
func TestStoreRefusals(t *testing.T) {
	const secret = "hunter2-Xq9"
	for _, tc := range []struct {
		name, body, key, says string
	}{
		{"password in the URL", "dsn: postgres://warden:" + secret + "@db/warden", "store.dsn", "holds a password"},
		{"password parameter", "dsn: postgres://warden@db/warden?password=" + secret, "store.dsn", "password parameter"},
		{"keyword form", "dsn: host=db user=warden password=" + secret, "store.dsn", "not a postgres:// URL"},
		{"another scheme", "dsn: mysql://db/warden", "store.dsn", "not a postgres:// URL"},
		{"no database", "dsn: postgres://warden@db", "store.dsn", "names no database"},
		{"both password sources", "dsn: postgres://warden@db/w\n  passwordFile: /etc/warden/pg\n  passwordEnv: PGPW", "store.passwordEnv", "both set"},
		{"password in passwordEnv", "dsn: postgres://warden@db/w\n  passwordEnv: " + secret, "store.passwordEnv", "not an environment variable name"},
		{"relative passwordFile", "dsn: postgres://warden@db/w\n  passwordFile: pg.txt", "store.passwordFile", "passwordFile"},
		{"settings without a dsn", "passwordEnv: PGPW", "store.dsn", "dsn is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := mustParse(t, "version: 1\nstore:\n  "+tc.body+"\n")
			p := problemAt(t, l, tc.key)
			if !strings.Contains(p.Message, tc.says) {
				t.Errorf("problem = %q, want it to say %q", p.Message, tc.says)
			}
			if all := fmt.Sprint(l.Problems); strings.Contains(all, secret) {
				t.Errorf("the problems quote the password: %s", all)
			}
			if !l.Policy.Store.Invalid || l.Policy.Store.DSN != "" {
				t.Errorf("Store = %+v; want Invalid, with no DSN taken from the file", l.Policy.Store)
			}
		})
	}
}

// FuzzCheckStoreDSN: whatever the DSN, the problem never repeats a
// password it holds.
func FuzzCheckStoreDSN(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h/db", "postgres://u@h/db?password=pw", "host=h password=pw", "pw", "postgresql://:pw@/x", "postgres://u:p%40w@h/d"} {
		f.Add(s, "pw")
	}
	f.Fuzz(func(t *testing.T, dsn, pw string) {
		if len(pw) < 4 || !strings.Contains(dsn, pw) {
			return
		}
		u, err := url.Parse(dsn)
		secret := err == nil && u.User != nil
		if secret {
			p, ok := u.User.Password()
			secret = ok && p == pw
		}
		if !secret && !strings.Contains(strings.ToLower(dsn), "password") {
			return
		}
		if why := CheckStoreDSN(dsn); strings.Contains(why, pw) {
			t.Fatalf("CheckStoreDSN(%q) = %q repeats the password %q", dsn, why, pw)
		}
	})
}
