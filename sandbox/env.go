package sandbox

import (
	"slices"
	"strings"
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

// benignNames contain a credential word but hold none.
var benignNames = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE"}

// IsCredentialName reports whether an environment variable of this name is
// scrubbed from a sandboxed command's environment unless passed explicitly.
// Matching ignores letter case.
func IsCredentialName(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(benignNames, n) {
		return false
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
	return false
}

// ScrubEnv returns env without credential-like variables (IsCredentialName),
// keeping those named in pass, and without malformed entries. It also
// reports the names it removed, so a caller can say what was withheld
// without showing a value.
func ScrubEnv(env, pass []string) (kept, removed []string) {
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if IsCredentialName(name) && !slices.Contains(pass, name) {
			removed = append(removed, name)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}
