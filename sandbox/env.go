package sandbox

import (
	"slices"
	"strings"

	"github.com/agentwarden/warden/redact"
)

// credentialPrefixes are environment variable name prefixes that hold cloud,
// model-provider and service credentials.
var credentialPrefixes = []string{
	"AWS_", "AZURE_", "ARM_CLIENT_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_",
	"OPENAI_", "ANTHROPIC_", "COHERE_", "MISTRAL_", "GROQ_", "REPLICATE_",
	"HUGGINGFACE_", "DOCKER_", "VAULT_", "STRIPE_", "DIGITALOCEAN_",
	"HEROKU_", "CLOUDFLARE_", "TWILIO_", "SLACK_", "DISCORD_", "TELEGRAM_",
	"SENTRY_", "DATADOG_", "NETLIFY_", "VERCEL_", "SUPABASE_", "FIREBASE_",
	"GITLAB_", "BITBUCKET_", "NPM_CONFIG__", "PULUMI_", "TF_VAR_",
	"ALCHEMY_", "INFURA_", "ETHERSCAN_", "WARDEN_",
}

// credentialNames are whole variable names that hold credentials or reach
// something that grants them (agent sockets, kube and database configs).
var credentialNames = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "HF_TOKEN", "NPM_TOKEN",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "KUBECONFIG",
	"DATABASE_URL", "REDIS_URL", "MONGODB_URI", "MONGO_URL", "PGPASSFILE",
	"MYSQL_PWD", "NETRC", "KRB5CCNAME", "DBUS_SESSION_BUS_ADDRESS",
	"XAUTHORITY", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
	"BW_SESSION", "OP_SESSION", "CODECOV_TOKEN",
}

// credentialWords are parts of a name that mark it as a credential wherever
// they appear.
var credentialWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL",
	"PRIVATE", "COOKIE", "AUTH",
}

// credentialParts are whole words of a name, split at '_', '-', '.' and
// camelCase humps, that mark a credential: DB_PASS, ADMIN_PW, SMTP_PWD,
// DB_CREDS, PG_DSN. They are too short to match inside other words ("BYPASS",
// "OLDPWD", "CREDIT" stay), so they count only as words of their own.
var credentialParts = []string{
	"PASS", "PW", "PWD", "PASSCODE", "PIN", "CRED", "CREDS", "PSK", "DSN", "APIKEY",
	"JWT", "SALT", "OTP", "TOTP",
	// A personal access token (GITHUB_PAT, ADO_PAT), a webhook URL (which
	// is its own credential), a wallet's recovery phrase.
	"PAT", "WEBHOOK", "WEBHOOKS", "MNEMONIC",
}

// benignNames contain a credential word but hold none. PWD and OLDPWD are the
// working directories. PASSWORD_STORE_DIR is not benign: it locates a store of
// secrets, like PGPASSFILE and NETRC, and is scrubbed.
var benignNames = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "PWD", "OLDPWD"}

// IsCredentialName reports whether an environment variable of this name is
// scrubbed from a sandboxed command's environment unless passed explicitly.
// Matching ignores letter case.
func IsCredentialName(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(benignNames, n) {
		return false
	}
	// Git configuration given through the environment (GIT_CONFIG_COUNT
	// with its GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n, as Gemini CLI sets
	// them; git -c's GIT_CONFIG_PARAMETERS) may carry credentials
	// (http.extraHeader) and goes as a whole: a count left without its
	// keys makes git refuse to start.
	if n == "GIT_CONFIG_COUNT" || n == "GIT_CONFIG_PARAMETERS" ||
		strings.HasPrefix(n, "GIT_CONFIG_KEY_") || strings.HasPrefix(n, "GIT_CONFIG_VALUE_") {
		return true
	}
	if slices.Contains(credentialNames, n) {
		return true
	}
	for _, p := range credentialPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range nameWords(name) {
		if slices.Contains(credentialParts, w) {
			return true
		}
	}
	return false
}

// nameWords splits a variable name into upper-case words at every byte that
// is not a letter or digit and at camelCase humps: "dbPass_x" gives DB, PASS
// and X.
func nameWords(name string) []string {
	var words []string
	start := -1
	for i := 0; i <= len(name); i++ {
		var c byte
		if i < len(name) {
			c = name[i]
		}
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		hump := i > 0 && 'A' <= c && c <= 'Z' && 'a' <= name[i-1] && name[i-1] <= 'z'
		if start >= 0 && (!alnum || hump) {
			words = append(words, strings.ToUpper(name[start:i]))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	return words
}

// IsCredentialValue reports whether a variable's value holds something
// shaped like a secret, whatever the variable is called: a URL with a
// password (AMQP_URL=amqp://app:pw@mq), a provider's token (ghp_…, sk-…,
// AKIA…), a PEM private key, a JWT, a recovery phrase; what redact.String
// would hide in a log.
func IsCredentialValue(value string) bool {
	return value != "" && redact.String(value) != value
}

// ScrubEnv returns env without credential-like variables (IsCredentialName,
// IsCredentialValue), keeping those named in pass, and without malformed
// entries. It also reports the names it removed, so a caller can say what
// was withheld without showing a value.
func ScrubEnv(env, pass []string) (kept, removed []string) {
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if (IsCredentialName(name) || IsCredentialValue(value)) && !slices.Contains(pass, name) {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}
