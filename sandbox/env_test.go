package sandbox_test

import (
	"slices"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

func TestIsCredentialName(t *testing.T) {
	scrubbed := []string{
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS",
		"GCP_PROJECT", "GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN",
		"NPM_TOKEN", "SSH_AUTH_SOCK", "DOCKER_HOST", "KUBECONFIG", "VAULT_ADDR", "STRIPE_API_KEY",
		"DATABASE_URL", "MY_SERVICE_PASSWORD", "some_secret", "PRIVATE_KEY_PATH", "api_key",
		"DBUS_SESSION_BUS_ADDRESS", "WARDEN_HOME",
		// Short credential words count as words of their own (issue 23).
		"DB_PASS", "SMTP_PASS", "ADMIN_PW", "DB_PWD", "ROOT_PASSWD", "MYSQL_ROOT_PASSWORD", "PGPASSWORD",
		"db_pass", "dbPass", "ldap-pw", "APP_CREDS", "DB_CRED", "PG_DSN", "WIFI_PSK", "SIM_PIN",
		"PASS", "PW", "PASSCODE_X", "MAILGUN_APIKEY", "SESSION_JWT", "TOTP_SEED",
		// It locates a store of secrets, like PGPASSFILE.
		"PASSWORD_STORE_DIR",
		// Personal access tokens, webhooks, recovery phrases.
		"GITHUB_PAT", "ADO_PAT", "SLACK_WEBHOOK", "DEPLOY_WEBHOOK_URL", "WALLET_MNEMONIC",
		// Git configuration through the environment goes as a whole.
		"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_PARAMETERS",
	}
	kept := []string{
		"PATH", "HOME", "LANG", "TERM", "USER", "SHELL", "GOPATH", "PWD", "OLDPWD", "pwd", "EDITOR", "LC_ALL",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "BYPASS_CACHE", "COMPASS_HOME", "CREDIT_LIMIT", "XDG_SESSION_TYPE",
		"SPINNER", "PASSENGER_ENV", "OPTIONS", "PWDX", "SHLVL", "PS1",
		"PATCH_LEVEL", "PATH_EXTRA", "SPATIAL_INDEX",
	}
	for _, n := range scrubbed {
		if !sandbox.IsCredentialName(n) {
			t.Errorf("IsCredentialName(%q) = false, want true", n)
		}
	}
	for _, n := range kept {
		if sandbox.IsCredentialName(n) {
			t.Errorf("IsCredentialName(%q) = true, want false", n)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	kept, removed := sandbox.ScrubEnv(
		[]string{"PATH=/bin", "AWS_SECRET_ACCESS_KEY=x", "NPM_TOKEN=y", "noequals", "=empty", "LANG=C"},
		[]string{"NPM_TOKEN"})
	if want := []string{"PATH=/bin", "NPM_TOKEN=y", "LANG=C"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if want := []string{"AWS_SECRET_ACCESS_KEY"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
}

// TestScrubEnvByValue: a variable with an ordinary name whose value is
// shaped like a secret (a URL with a password, a provider's token, a PEM
// key) is removed too, unless passed; ordinary values stay.
func TestScrubEnvByValue(t *testing.T) {
	secretShaped := []string{
		"AMQP_URL=amqp://app:s3cr3t-pw@mq.example.com/vhost",
		"UPSTREAM=https://deploy:hunter2hunter2@git.example.com/x.git",
		"CI_NOTE=ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789",
		"ASSISTANT=sk-ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123",
		"LOGIN=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"BLOB=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
	}
	ordinary := []string{
		"PATH=/usr/local/go/bin:/usr/bin:/bin", "TERM=xterm-256color", "LANG=C.UTF-8", "EDITOR=vi",
		"LS_COLORS=di=01;34:ln=01;36:so=01;35:pi=40;33", "GOFLAGS=-mod=mod", "NODE_ENV=development",
		"REPO=git@github.com:example/x.git", "MIRROR=https://user@proxy.golang.org", "CC=gcc",
		"GIT_COMMIT=0123456789abcdef0123456789abcdef01234567", "EMPTY=",
	}
	kept, removed := sandbox.ScrubEnv(append(slices.Clone(secretShaped), ordinary...), []string{"UPSTREAM"})
	want := append([]string{secretShaped[1]}, ordinary...)
	if !slices.Equal(kept, want) {
		t.Errorf("kept %q,\nwant %q", kept, want)
	}
	if want := []string{"AMQP_URL", "CI_NOTE", "ASSISTANT", "LOGIN", "BLOB"}; !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
}

func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"64M", 64 << 20, true}, {"64m", 64 << 20, true}, {"1G", 1 << 30, true}, {"512k", 512 << 10, true},
		{"1048576", 1 << 20, true}, {"10MB", 10 << 20, true}, {"0", 0, true}, {"7B", 7, true},
		{"", 0, false}, {"-1M", 0, false}, {"1.5G", 0, false}, {"M", 0, false}, {"99999999999999G", 0, false}, {"12T", 0, false},
	} {
		got, err := sandbox.ParseBytes(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"64M", "1G", "512k", "10MB", "-1", "1.5G", "", "B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := sandbox.ParseBytes(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseBytes(%q) = %d, a negative size", s, n)
		}
		back, err := sandbox.ParseBytes(sandbox.FormatBytes(n))
		if err != nil || back != n {
			t.Fatalf("ParseBytes(FormatBytes(%d)) = %d, %v; want the same size", n, back, err)
		}
	})
}
