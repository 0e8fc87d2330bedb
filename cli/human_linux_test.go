package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestOutputForPeopleAtATerminal: at a terminal, check, trade and portfolio
// print a summary (coloured unless NO_COLOR); --json prints JSON there too.
// Piped, they print JSON (check.txtar, trade_test.go).
func TestOutputForPeopleAtATerminal(t *testing.T) {
	home := t.TempDir()
	if out, err := wardenCmd(home, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := wardenCmd(home, args...)
		cmd.Env = append(cmd.Env, env...)
		out, err := atTerminal(t, cmd).wait()
		if err != nil {
			t.Fatalf("warden %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	tests := []struct {
		name    string
		env     []string
		args    []string
		want    []string
		notWant []string
	}{
		{name: "check coloured", env: []string{"TERM=xterm"}, args: []string{"check", "tool", "call", "get_price"},
			want: []string{"\x1b[1;32mALLOW\x1b[0m  get_price is tier 1", "rule   tools.tier1 (tier 1)", "next   go ahead"}, notWant: []string{`"verdict"`}},
		{name: "check NO_COLOR", env: []string{"NO_COLOR=1"}, args: []string{"check", "tool", "call", "buy_token", "--autonomous"},
			want: []string{"DENY  tier 3 actions are blocked on autonomous turns", "rule   safety.tier_gate", "warden audit --trace"}, notWant: []string{"\x1b["}},
		{name: "check --json", args: []string{"check", "--json", "tool", "call", "get_price"},
			want: []string{`{"verdict":"allow"`}, notWant: []string{"ALLOW"}},
		{name: "trade", env: []string{"NO_COLOR=1"}, args: []string{"trade", "buy", "WETH", "--param", "chain=base", "--param", "amount_usd=25"},
			want: []string{"ALLOW  $25", "next   nothing: it executed", "filled buy $25: paid 25 USDC, got"}},
		{name: "portfolio", args: []string{"portfolio"},
			want: []string{"paper backend: $", "WETH on base", "exposure ETH"}, notWant: []string{`"holdings"`}},
		{name: "portfolio --json", args: []string{"portfolio", "--json"},
			want: []string{`"holdings"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(tt.env, tt.args...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("warden %s at a terminal showed %q, want %q", strings.Join(tt.args, " "), out, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("warden %s at a terminal showed %q, want no %q", strings.Join(tt.args, " "), out, w)
				}
			}
		})
	}
}

// TestSignerInitShowsASpinner: at a terminal, signer init's scrypt shows a
// spinner on stderr, cleared before the address is printed.
func TestSignerInitShowsASpinner(t *testing.T) {
	home := t.TempDir()
	if out, err := wardenCmd(home, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	pass := home + "/pass"
	if err := os.WriteFile(pass, []byte("correct horse battery staple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := atTerminal(t, wardenCmd(home, "signer", "init", "--passphrase-file", pass)).wait()
	if err != nil {
		t.Fatalf("signer init: %v\n%s", err, out)
	}
	if !strings.Contains(out, "⠋ making and encrypting a new key (scrypt") || !regexp.MustCompile(`\x1b\[K0x[0-9a-fA-F]{40}`).MatchString(out) {
		t.Errorf("signer init at a terminal showed %q; want a spinner, cleared before the address", out)
	}
}
