package redact

import (
	"encoding/json"
	"testing"
)

// benchCommand is a typical 200-byte shell command with no secret in it.
const benchCommand = `cd /home/user/projects/warden && git log --oneline -n 20 --author="alice" -- cmd/warden/main.go | grep -v "Merge branch" | head -n 10 && go test -run TestPipeline -count=1 ./internal/...`

// benchParams is a typical request params object.
const benchParams = `{"command":"git push origin main","cwd":"/home/user/projects/warden","timeout_ms":30000,"env":{"GIT_TERMINAL_PROMPT":"0"},"max_tokens":1024}`

func BenchmarkString(b *testing.B) {
	secret := `curl -H "Authorization: Bearer ` + fakeSecrets["openai"] + `" https://api.openai.com/v1/models && echo done`
	for _, bc := range []struct{ name, in string }{
		{"clean", benchCommand},
		{"secret", secret},
		{"prose", "Please review the pull request and merge it if the tests pass on every platform we support and then tag a release."},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				String(bc.in)
			}
		})
	}
}

func BenchmarkJSON(b *testing.B) {
	secret := `{"command":"git push origin main","cwd":"/home/user/projects/warden","api_key":"abc123","env":{"GITHUB_TOKEN":"` + fakeSecrets["github-ghp"] + `"},"max_tokens":1024}`
	for _, bc := range []struct{ name, in string }{
		{"clean", benchParams},
		{"secret", secret},
	} {
		raw := json.RawMessage(bc.in)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				JSON(raw)
			}
		})
	}
}

func BenchmarkIsSecretKey(b *testing.B) {
	keys := []string{"command", "max_tokens", "OPENAI_API_KEY", "x-amz-security-token", "allowedTokens"}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range keys {
			IsSecretKey(k)
		}
	}
}
