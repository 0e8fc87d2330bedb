package redact

import (
	"sort"
	"strings"
	"testing"
)

func TestStringShapes(t *testing.T) {
	names := make([]string, 0, len(fakeSecrets))
	for name := range fakeSecrets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		secret := fakeSecrets[name]
		for _, form := range []struct{ name, in, want string }{
			{"alone", secret, Mask},
			// The words around a secret are not BIP-39 words, which would
			// extend a mnemonic.
			{"in-text", "printf %s " + secret + " | tee out", "printf %s " + Mask + " | tee out"},
			{"quoted", `send("` + secret + `")`, `send("` + Mask + `")`},
			{"line", "VALUE:\n" + secret + "\nEOF", "VALUE:\n" + Mask + "\nEOF"},
		} {
			t.Run(name+"/"+form.name, func(t *testing.T) {
				if got := String(form.in); got != form.want {
					t.Errorf("String(%q) = %q, want %q", form.in, got, form.want)
				}
			})
		}
	}
}

// stringCase is one String table case; the fuzz test is seeded from them.
type stringCase struct {
	name string
	in   string
	want string
}

// stringCases returns the String table.
func stringCases() []stringCase {
	hex64 := fakeTail(64, hexLower)
	addr := "0x" + fakeTail(40, hexLower)
	bip11 := "abandon ability able about above absent absorb abstract absurd abuse access"
	return []stringCase{
		// Secret-named pairs, flags and headers.
		{"export", "export OPENAI_API_KEY=abc123def", "export OPENAI_API_KEY=" + Mask},
		{"env-prefix", "PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=" + Mask + " psql -h db"},
		{"flag-equals", "mysql --password=hunter2 -u root", "mysql --password=" + Mask + " -u root"},
		{"flag-space", "mysql --password hunter2 -u root", "mysql --password " + Mask + " -u root"},
		{"flag-quoted", "tool --api-key 'abc def' run", "tool --api-key '" + Mask + "' run"},
		{"flag-single-dash", "java -Dx=1 -password hunter2", "java -Dx=1 -password " + Mask},
		{"quoted-value", `PASSWORD="a b c" ./run`, `PASSWORD="` + Mask + `" ./run`},
		{"curl-bearer", `curl -H "Authorization: Bearer abc123" https://x`, `curl -H "Authorization: Bearer ` + Mask + `" https://x`},
		{"curl-basic", `curl -H 'authorization: Basic dXNlcjpwYXNz' https://x`, `curl -H 'authorization: Basic ` + Mask + `' https://x`},
		{"api-key-header", `curl -H "X-Api-Key: abc123" https://x`, `curl -H "X-Api-Key: ` + Mask + `" https://x`},
		{"cookie-header", "Cookie: session=abc; theme=dark\nAccept: */*", "Cookie: " + Mask + "\nAccept: */*"},
		{"query-param", `curl "https://x/api?access_token=abc123&page=2"`, `curl "https://x/api?access_token=` + Mask + `&page=2"`},
		{"json-in-text", `{"password": "hunter2", "user": "bob"}`, `{"password": "` + Mask + `", "user": "bob"}`},
		{"json-number", `{"pin_password": 1234, "user": "bob"}`, `{"pin_password": ` + Mask + `, "user": "bob"}`},
		{"yaml", "password: hunter2\nuser: bob", "password: " + Mask + "\nuser: bob"},
		{"dotted-key", "spring.datasource.password=s3cret", "spring.datasource.password=" + Mask},
		{"literal", "kubectl create secret generic db --from-literal=password=abc", "kubectl create secret generic db --from-literal=password=" + Mask},
		{"unterminated-quote", `TOKEN="abc def`, `TOKEN="` + Mask},
		{"bare-bearer", "got Bearer abc.DEF-123_x from the server", "got Bearer " + Mask + " from the server"},
		{"userinfo", "psql postgres://admin:s3cr3t@db:5432/app", "psql postgres://admin:" + Mask + "@db:5432/app"},
		{"userinfo-git", "git clone https://oauth2:abcdef@gitlab.com/x.git", "git clone https://oauth2:" + Mask + "@gitlab.com/x.git"},
		// Shapes in context.
		{"export-shape", "export OPENAI_API_KEY=" + fakeSecrets["openai"], "export OPENAI_API_KEY=" + Mask},
		{"bearer-jwt", "Authorization: Bearer " + fakeSecrets["jwt"], "Authorization: Bearer " + Mask},
		{"git-remote", "https://" + fakeSecrets["github-ghp"] + "@github.com/o/r", "https://" + Mask + "@github.com/o/r"},
		{"tx-hash-fails-safe", "cast receipt 0x" + hex64, "cast receipt " + Mask},
		{"bare-hex-flag", "cast send --private-key " + hex64 + " 0xabc", "cast send --private-key " + Mask + " 0xabc"},
		{"bare-hex-prose", "my private key: " + hex64, "my private key: " + Mask},
		{"pem-in-text", "key=\n" + fakeSecrets["pem-rsa"] + "\ndone", "key=\n" + Mask + "\ndone"},
		{"pem-unterminated", "x -----BEGIN PRIVATE KEY-----\nMIIabc", "x " + Mask},
		{"mnemonic-numbered", "1. abandon 2. ability 3. able 4. about 5. above 6. absent 7. absorb 8. abstract 9. absurd 10. abuse 11. access 12. accident", "1. " + Mask},
		{"mnemonic-json-list", `["abandon", "ability", "able", "about", "above", "absent", "absorb", "abstract", "absurd", "abuse", "access", "accident"]`, `["` + Mask + `"]`},
		{"mnemonic-in-prose", "my seed is abandon ability able about above absent absorb abstract absurd abuse access accident ok", "my seed is " + Mask + " ok"},
		{"glued-header", "curl -H 'Authorization:Bearer abc123' x", "curl -H 'Authorization:Bearer " + Mask + "' x"},
		{"glued-word", "medusa -m PASS:Password", "medusa -m PASS:Password"},
		{"glued-random", "medusa -m PASS:Hunter2x -h host", "medusa -m PASS:" + Mask + " -h host"},
		{"token-secret", "token=abc123def456", "token=" + Mask},
		{"seed-hex", "tool --seed 0x" + hex64, "tool --seed " + Mask},
		{"yaml-unclosed-quote", "password: \"abc\nuser: bob", "password: \"" + Mask + "\nuser: bob"},
		// Masking the mnemonic brings "privkey" within two fields of the hex
		// key; String re-scans its output, so the hex is masked as well.
		{"hint-after-mask", "privkey abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about " + hex64, "privkey " + Mask + " " + Mask},
		{"mnemonic-15", "zoo zone zero youth young you year yard wrong wrist write worth world work word", Mask},

		// Harmless text stays as it is.
		{"empty", "", ""},
		{"ls", "ls -la /tmp", "ls -la /tmp"},
		{"commit", `git commit -m "fix token counting for max_tokens"`, `git commit -m "fix token counting for max_tokens"`},
		{"max-tokens", "llm --max_tokens=100 --temperature=0.2", "llm --max_tokens=100 --temperature=0.2"},
		{"token-in", "swap token_in=" + addr + " token_out=" + addr, "swap token_in=" + addr + " token_out=" + addr},
		{"var-ref", "echo $TOKEN", "echo $TOKEN"},
		{"var-ref-header", `curl -H "Authorization: Bearer $TOKEN" https://x`, `curl -H "Authorization: Bearer $TOKEN" https://x`},
		{"var-ref-assign", "PASSWORD=${DB_PASS} ./run", "PASSWORD=${DB_PASS} ./run"},
		{"scikit", "pip install scikit-learn sk-learn", "pip install scikit-learn sk-learn"},
		{"sk-words", "see sk-this-is-not-a-key-at-all-really", "see sk-this-is-not-a-key-at-all-really"},
		{"address", "cast balance " + addr, "cast balance " + addr},
		{"sha256-digest", "docker pull alpine@sha256:" + hex64, "docker pull alpine@sha256:" + hex64},
		{"sha256sum", hex64 + "  file.tar.gz", hex64 + "  file.tar.gz"},
		{"hex-65", "0x" + hex64 + "a", "0x" + hex64 + "a"},
		{"calldata", "0xa9059cbb" + hex64, "0xa9059cbb" + hex64},
		{"git-sha", "git show " + hex64[:40], "git show " + hex64[:40]},
		{"uuid", "id=123e4567-e89b-12d3-a456-426614174000", "id=123e4567-e89b-12d3-a456-426614174000"},
		{"aws-too-long", "AKIA" + strings.Repeat("A", 17), "AKIA" + strings.Repeat("A", 17)},
		{"ghp-short", "ghp_short", "ghp_short"},
		{"eyJ-short", "eyJabc.def.ghi", "eyJabc.def.ghi"},
		{"certificate", "-----BEGIN CERTIFICATE-----\nMIIabc\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIabc\n-----END CERTIFICATE-----"},
		{"public-key", "-----BEGIN PUBLIC KEY-----\nMIIabc\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIabc\n-----END PUBLIC KEY-----"},
		{"password-stdin", "echo $P | docker login --password-stdin ghcr.io", "echo $P | docker login --password-stdin ghcr.io"},
		{"no-password", "tool --no-password run", "tool --no-password run"},
		{"short-flag", "mysql -u root -p db", "mysql -u root -p db"},
		{"docker-port", "docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"},
		{"userinfo-no-password", "ssh://git@github.com/o/r", "ssh://git@github.com/o/r"},
		{"port-and-at", "https://host:8080/users/@alice", "https://host:8080/users/@alice"},
		{"bearer-prose", "bearer tokens are described in RFC 6750", "bearer tokens are described in RFC 6750"},
		{"secret-commands", "kubectl get secrets -n prod", "kubectl get secrets -n prod"},
		{"ssh-keygen", "ssh-keygen -t ed25519 -C alice@example.com", "ssh-keygen -t ed25519 -C alice@example.com"},
		{"url-scheme", "curl https://api.example.com/v1/tokens", "curl https://api.example.com/v1/tokens"},
		{"mnemonic-11", bip11, bip11},
		{"prose", "you can also ask about that area above all and this is the art of the army", "you can also ask about that area above all and this is the art of the army"},
		{"prose-long", "The quick brown fox jumps over the lazy dog while the agent runs a shell command to list every file in the current working directory.", "The quick brown fox jumps over the lazy dog while the agent runs a shell command to list every file in the current working directory."},
		{"capitalised-words", "Abandon Ability Able About Above Absent Absorb Abstract Absurd Abuse Access Accident", "Abandon Ability Able About Above Absent Absorb Abstract Absurd Abuse Access Accident"},
		{"token-ticker", "Spot Trade\nToken: ETH\nAmount: 200", "Spot Trade\nToken: ETH\nAmount: 200"},
		{"token-address", "token=" + addr + " amount=5", "token=" + addr + " amount=5"},
		{"seed-int", "rspec --seed 42 && llm --seed=7", "rspec --seed 42 && llm --seed=7"},
		{"glued-subcommands", "sequelize db:seed:all && sf force:auth:web:login && sf force:user:password:generate", "sequelize db:seed:all && sf force:auth:web:login && sf force:user:password:generate"},
		{"glued-placeholder", "medusa -m PASS:password", "medusa -m PASS:password"},
		{"password-file", "tool --password-file /run/secrets/db --token-path ~/.tok PASSWORD_FILE=/x", "tool --password-file /run/secrets/db --token-path ~/.tok PASSWORD_FILE=/x"},
		{"html-after-colon", `reset your password: <a href="https://x/reset">here</a>`, `reset your password: <a href="https://x/reset">here</a>`},
		{"mask", Mask, Mask},
		{"masked-pair", "PASSWORD=" + Mask, "PASSWORD=" + Mask},
	}
}

func TestString(t *testing.T) {
	for _, tt := range stringCases() {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStringReturnsInputWhenClean(t *testing.T) {
	in := "git status --short && go test ./..."
	if allocs := testing.AllocsPerRun(100, func() { _ = String(in) }); allocs != 0 {
		t.Errorf("String(%q) allocates %v times, want 0", in, allocs)
	}
}
