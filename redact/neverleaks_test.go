package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rng is a deterministic xorshift generator: a fuzz input's seed gives the
// same planted secret on every run.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	if x == 0 {
		x = 0x9e3779b97f4a7c15
	}
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return x
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func (r *rng) pick(s []string) string { return s[r.intn(len(s))] }

// word returns n random bytes from alphabet.
func (r *rng) word(n int, alphabet string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.intn(len(alphabet))]
	}
	return string(b)
}

// password returns a random password of 10 to 40 bytes that starts with a
// letter and holds a digit: the value a person or a generator would choose.
func (r *rng) password() string {
	const rest = alphaNum + "_-./+"
	return r.word(1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") + r.word(8+r.intn(31), rest) + r.word(1, "0123456789")
}

// quote writes v as one shell word with random quoting: bare, in single or
// double quotes, or split in two by quotes (ab""cd, "ab"'cd', 'ab'cd).
func (r *rng) quote(v string) string {
	cut := 1 + r.intn(len(v)-1)
	a, b := v[:cut], v[cut:]
	switch r.intn(7) {
	case 0:
		return "'" + v + "'"
	case 1:
		return `"` + v + `"`
	case 2:
		return a + "''" + b
	case 3:
		return `"` + a + `"'` + b + `'`
	case 4:
		return "'" + a + "'" + b
	case 5:
		return a + `""` + b
	}
	return v
}

// secretKeys are secret-named keys as they appear in files and commands.
var secretKeys = []string{
	"aws_secret_access_key", "db_password", "DB_PASS", "admin_pw", "SMTP_PASSWD",
	"api_key", "apiKey", "private_key", "client_secret", "GITHUB_TOKEN",
	"x_credential", "auth_token", "passphrase", "spring.datasource.password",
}

// numClasses is the number of secret classes plant knows.
const numClasses = 14

// plant returns a text that holds a secret of the given class, and the
// secret itself: the bytes that must never reach the audit log. command
// reports that the text is a command, which must start a line or follow a
// command separator.
func plant(class uint8, r *rng) (text, secret string, command bool) {
	pw := r.password()
	switch class % numClasses {
	case 0: // a provider key, bare or split by quoting
		secret = plantable()[r.intn(len(plantable()))]
		if strings.ContainsAny(secret, "\n .") {
			return secret, secret, false // PEM, mnemonics, JWTs: FuzzString plants them
		}
		return r.quote(secret), secret, false
	case 1: // key = value, key: value, "key": "value" in written contents
		k := r.pick(secretKeys)
		forms := []string{k + "=" + r.quote(pw), k + " = " + pw, k + ": " + pw, `"` + k + `": "` + pw + `"`, k + "= " + pw, k + " : " + pw}
		return r.pick(forms), pw, false
	case 2: // a setter: the key, then its value as the next word
		k := r.pick(secretKeys)
		forms := []string{"aws configure set " + k + " ", "git config --global " + k + " ", "npm config set " + k + " ", "set -gx " + k + " "}
		return r.pick(forms) + r.quote(pw), pw, true
	case 3: // mysql's glued password
		return r.pick([]string{"mysql", "mysqldump", "mariadb"}) + " -u root -p" + r.quote(pw) + " app", pw, true
	case 4:
		return "mysql " + r.pick([]string{"--password=", "--password "}) + r.quote(pw) + " -u root app", pw, true
	case 5:
		return "PGPASSWORD=" + r.quote(pw) + " psql -h db app", pw, true
	case 6:
		return "sshpass -p" + r.pick([]string{" ", ""}) + r.quote(pw) + " ssh admin@host", pw, true
	case 7:
		return "curl " + r.pick([]string{"-u ", "--user ", "--user=", "-u"}) + r.quote("alice:"+pw) + " https://api.example.com/", pw, true
	case 8: // URL user info
		return "git clone https://alice:" + pw + "@git.example.com/r.git", pw, false
	case 9: // a bare 32-byte hex key on its own line, with or without 0x
		hex := r.word(64, hexLower)
		return "\n" + r.pick([]string{"", "0x"}) + hex + "\n", hex, false
	case 10:
		return "docker login -u bob -p " + r.quote(pw) + " ghcr.io", pw, true
	case 11: // a long flag named after a secret
		return "tool " + r.pick([]string{"--password ", "--api-key ", "--token=", "--client-secret "}) + r.quote(pw) + " run", pw, true
	case 12: // a command inside a quoted command
		return `bash -c "mysql -uroot -p` + pw + ` app"`, pw, true
	}
	return "redis-cli -a " + r.quote(pw) + " ping", pw, true
}

// requestSeeds returns the request-like texts under testdata/requests.
func requestSeeds(f *testing.F) []string {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "requests", "*"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds in testdata/requests: %v", err)
	}
	var seeds []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	return seeds
}

// FuzzNeverLeaks checks the property issue 23 asks for: a secret of any class
// above, quoted at random and planted anywhere in a request-like text, never
// appears in the redacted text.
func FuzzNeverLeaks(f *testing.F) {
	for i, s := range requestSeeds(f) {
		for class := range uint8(numClasses) {
			f.Add(s, uint8(i*7+int(class)), class, uint64(i)<<8|uint64(class))
		}
	}
	f.Fuzz(func(t *testing.T, around string, at uint8, class uint8, seed uint64) {
		r := rng(seed)
		text, secret, command := plant(class, &r)
		if strings.Contains(around, secret) {
			return
		}
		// Surrounding text cannot escape the separator before the planted
		// text: a trailing backslash would join the two into one word.
		cut := int(at) % (len(around) + 1)
		prefix, suffix := strings.TrimRight(around[:cut], `\`), around[cut:]
		seps := []string{" ", "\n", "\t"}
		if command {
			seps = []string{"\n", "; ", " && ", " | "}
		}
		in := prefix + r.pick(seps) + text + r.pick([]string{" ", "\n", "; "}) + suffix
		if out := String(in); strings.Contains(out, secret) {
			t.Fatalf("String(%q) = %q, which still holds %q", in, out, secret)
		}
	})
}
