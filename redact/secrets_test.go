package redact

import "strings"

// The fake credentials below are assembled at run time so that no complete
// provider-format token appears in the source, where secret scanners would
// flag it.

// fakeTail returns n deterministic pseudo-random bytes from alphabet, with at
// least one digit and both cases when alphabet offers them.
func fakeTail(n int, alphabet string) string {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = alphabet[x%uint32(len(alphabet))]
	}
	// Pin a digit, a capital and a small letter where the alphabet has them.
	for i, want := range []string{"7", "Q", "k"} {
		if strings.Contains(alphabet, want) && n > i {
			b[i] = want[0]
		}
	}
	return string(b)
}

const (
	alphaNum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperNum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	base64u  = alphaNum + "-_"
	hexLower = "0123456789abcdef"
)

// fakeSecrets are credentials of every provider shape String recognises,
// keyed by name.
var fakeSecrets = map[string]string{
	"openai":        "sk" + "-" + fakeTail(48, alphaNum),
	"openai-proj":   "sk" + "-proj-" + fakeTail(64, base64u) + "T3Blbk" + "FJ" + fakeTail(64, base64u),
	"openai-svc":    "sk" + "-svcacct-" + fakeTail(40, base64u),
	"anthropic":     "sk" + "-ant-api03-" + fakeTail(93, base64u) + "AA",
	"github-ghp":    "gh" + "p_" + fakeTail(36, alphaNum),
	"github-gho":    "gh" + "o_" + fakeTail(36, alphaNum),
	"github-ghu":    "gh" + "u_" + fakeTail(36, alphaNum),
	"github-ghs":    "gh" + "s_" + fakeTail(36, alphaNum),
	"github-ghr":    "gh" + "r_" + fakeTail(36, alphaNum),
	"github-pat":    "github" + "_pat_" + fakeTail(22, alphaNum) + "_" + fakeTail(59, alphaNum),
	"gitlab":        "gl" + "pat-" + fakeTail(20, base64u),
	"slack-bot":     "xo" + "xb-" + "123456789012-1234567890123-" + fakeTail(24, alphaNum),
	"slack-user":    "xo" + "xp-" + "123456789012-1234567890123-1234567890123-" + fakeTail(32, hexLower),
	"slack-app":     "xa" + "pp-1-A0123456789-1234567890123-" + fakeTail(64, hexLower),
	"stripe-live":   "sk" + "_live_" + fakeTail(24, alphaNum),
	"stripe-test":   "sk" + "_test_" + fakeTail(24, alphaNum),
	"stripe-rk":     "rk" + "_live_" + fakeTail(24, alphaNum),
	"stripe-whsec":  "wh" + "sec_" + fakeTail(32, alphaNum),
	"aws-akia":      "AK" + "IA" + fakeTail(16, upperNum),
	"aws-asia":      "AS" + "IA" + fakeTail(16, upperNum),
	"google":        "AI" + "za" + fakeTail(35, base64u),
	"huggingface":   "hf" + "_" + fakeTail(34, alphaNum),
	"npm":           "np" + "m_" + fakeTail(36, alphaNum),
	"jwt":           "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	"jwt-unsigned":  "eyJhbGciOiJub25lIn0" + "." + "eyJzdWIiOiIxMjM0In0" + ".",
	"hex-key":       "0x" + fakeTail(64, hexLower),
	"pem-rsa":       pemBlock("RSA PRIVATE KEY"),
	"pem-pkcs8":     pemBlock("PRIVATE KEY"),
	"pem-ec":        pemBlock("EC PRIVATE KEY"),
	"pem-openssh":   pemBlock("OPENSSH PRIVATE KEY"),
	"pem-encrypted": pemBlock("ENCRYPTED PRIVATE KEY"),
	"pem-pgp":       pemBlock("PGP PRIVATE KEY BLOCK"),
	"mnemonic-12":   "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
	"mnemonic-24":   "legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth title",
}

// pemBlock returns a PEM block with the given label and a fake body.
func pemBlock(label string) string {
	body := fakeTail(64, alphaNum) + "\n" + fakeTail(64, alphaNum) + "\n" + fakeTail(20, alphaNum) + "=="
	return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----"
}
