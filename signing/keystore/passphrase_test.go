package keystore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing/keystore"
)

func TestFromFile(t *testing.T) {
	cases := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
		code    warden.ErrorCode
		message string
	}{
		{name: "plain", content: "s3cret", mode: 0o600, want: "s3cret"},
		{name: "trailing LF", content: "s3cret\n", mode: 0o600, want: "s3cret"},
		{name: "trailing CRLF", content: "s3cret\r\n", mode: 0o600, want: "s3cret"},
		{name: "only one newline removed", content: "s3cret\n\n", mode: 0o600, want: "s3cret\n"},
		{name: "inner and leading space kept", content: " a b \n", mode: 0o600, want: " a b "},
		{name: "read-only owner", content: "s3cret", mode: 0o400, want: "s3cret"},
		{name: "empty", content: "", mode: 0o600, code: warden.EInvalid, message: "is empty"},
		{name: "only a newline", content: "\n", mode: 0o600, code: warden.EInvalid, message: "is empty"},
		{name: "group-readable", content: "s3cret", mode: 0o640, code: warden.EInvalid, message: "open to group or others"},
		{name: "world-readable", content: "s3cret", mode: 0o644, code: warden.EInvalid, message: "open to group or others"},
		{name: "other-readable only", content: "s3cret", mode: 0o604, code: warden.EInvalid, message: "open to group or others"},
		{name: "too large", content: strings.Repeat("a", 64<<10+1), mode: 0o600, code: warden.EInvalid, message: "larger than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "passphrase")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			got, err := keystore.FromFile(path)
			if tc.code == "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("FromFile = %q, %v, want %q", got, err, tc.want)
				}
				return
			}
			wantCode(t, err, tc.code, path, tc.message)
			if got != nil {
				t.Errorf("FromFile returned %q with its error", got)
			}
			if strings.TrimSpace(tc.content) != "" && strings.Contains(warden.UserMessage(err), strings.TrimSpace(tc.content)) {
				t.Errorf("error %q quotes the passphrase", warden.UserMessage(err))
			}
			if strings.Contains(tc.message, "open to") && !strings.Contains(warden.UserMessage(err), "chmod 600 "+path) {
				t.Errorf("error %q does not give the chmod", warden.UserMessage(err))
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope")
		_, err := keystore.FromFile(path)
		wantCode(t, err, warden.ENotFound, path)
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := keystore.FromFile(dir)
		wantCode(t, err, warden.EInvalid, dir, "not a regular file")
	})
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"WARDEN_KEY_PASSPHRASE": "hunter2 hunter2", "EMPTY": ""}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	cases := []struct {
		name, variable, want string
		message              string
	}{
		{name: "set", variable: "WARDEN_KEY_PASSPHRASE", want: "hunter2 hunter2"},
		{name: "unset", variable: "UNSET", message: "UNSET holding the passphrase is not set"},
		{name: "empty", variable: "EMPTY", message: "EMPTY holding the passphrase is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := keystore.FromEnv(tc.variable, lookup)
			if tc.message == "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("FromEnv(%q) = %q, %v, want %q", tc.variable, got, err, tc.want)
				}
				return
			}
			wantCode(t, err, warden.EInvalid, tc.message)
		})
	}
	t.Run("os.LookupEnv by default", func(t *testing.T) {
		t.Setenv("WARDEN_TEST_PASSPHRASE", "from the environment")
		got, err := keystore.FromEnv("WARDEN_TEST_PASSPHRASE", nil)
		if err != nil || string(got) != "from the environment" {
			t.Fatalf("FromEnv = %q, %v", got, err)
		}
	})
}
