package redact

import "testing"

// TestProse: a secret named in running text loses its value; prose that
// only mentions passwords or tokens keeps every word.
func TestProse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"the password is Pw8fe1x9", "the password is " + Mask},
		{"login with password hunter42 please", "login with password " + Mask + " please"},
		{"the password was Tr0ub4dor&3.", "the password was " + Mask + "."},
		{"but the secret is s3cr3t-value", "but the secret is " + Mask},
		{"the deploy token tok_9f8e7d6c5b", "the deploy token " + Mask},
		{"PASSPHRASE is correcthorse7", "PASSPHRASE is " + Mask},
		{"the token limit is 4096", "the token limit is 4096"},
		{"the secret ingredient is love", "the secret ingredient is love"},
		{"use the token abc", "use the token abc"},
		{"set the password to $DB_PASSWORD", "set the password to $DB_PASSWORD"},
		{"passwords expire after 90 days", "passwords expire after 90 days"},
		{"the password file is /etc/app/pw1", "the password file is /etc/app/pw1"},
		{"a token count of 12k", "a token count of 12k"},
		{"mytoken abc123def", "mytoken abc123def"},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
