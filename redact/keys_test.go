package redact

import "testing"

func TestIsSecretKey(t *testing.T) {
	secret := []string{
		"token", "TOKEN", "Token", "access_token", "accessToken", "AccessToken",
		"refresh_token", "id_token", "auth_token", "authToken", "authtoken",
		"x-auth-token", "X-CSRF-Token", "csrftoken", "session_token", "sessionToken",
		"GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "HF_TOKEN", "bot_token", "api_token",
		"x-amz-security-token", "access_tokens", "refreshTokens", "apiTokens",
		"next_token", "bearer_token",
		"secret", "client_secret", "clientSecret", "AWS_SECRET_ACCESS_KEY", "secrets",
		"webhook_secret", "totp_secret",
		"password", "PASSWORD", "Password", "db.password", "spring.datasource.password",
		"PGPASSWORD", "MYSQL_PWD", "pwd", "passwd", "db_pass", "pass", "passphrase",
		"password_confirmation", "passcode",
		"api_key", "apikey", "apiKey", "APIKey", "API_KEY", "x-api-key", "X-Api-Key",
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "api_keys", "private_key", "privateKey",
		"PRIVATE_KEY", "privkey", "priv_key", "signing_key", "signingKey",
		"access_key", "aws_access_key_id", "accessKeyId", "secret_key", "encryption_key",
		"master_key", "ssh_key", "app_key", "APP_KEY", "wallet_key", "account_key",
		"mnemonic", "MNEMONIC", "seed_phrase", "seedPhrase", "seed", "wallet_seed",
		"authorization", "Authorization", "proxy-authorization", "Proxy-Authorization",
		"auth", "basic_auth", "http_auth", "cookie", "Cookie", "set-cookie",
		"Set-Cookie", "cookies", "credential", "credentials", "aws_credentials",
		"bearer", "jwt", "session_jwt", "authorization_code", "authorizationHeader",
		"token:abc_secret",
	}
	harmless := []string{
		"", "max_tokens", "maxTokens", "max_completion_tokens", "max_new_tokens",
		"token_in", "token_out", "tokenIn", "tokenOut", "tokens", "input_tokens",
		"output_tokens", "prompt_tokens", "completion_tokens", "cached_tokens",
		"total_tokens", "inputTokens", "allowedTokens", "allowed_tokens",
		"token_address", "tokenAddress", "token_symbol", "tokenSymbol", "token_id",
		"tokenId", "token_ids", "token_count", "token_type", "token_decimals",
		"token_amount", "token0", "token1", "tokenA", "sell_token", "buyToken",
		"sellToken", "from_token", "to_token", "eos_token", "bos_token", "pad_token",
		"stop_token", "erc20_token", "token_limit", "tokenizer", "tokenize",
		"key", "keys", "public_key", "publicKey", "pubkey", "primary_key", "cache_key",
		"sort_key", "idempotency_key", "object_key", "author", "authority", "authors",
		"auth_method", "auth_type", "oauth", "path", "command", "cwd", "PWD", "OLDPWD",
		"amount_usd", "symbol", "chain_id", "address", "to", "from", "private",
		"bypass", "compass", "session_id", "user", "username", "email", "url",
		"temperature", "model", "message", "signature", "hash", "tx_hash",
		"token:ETH", "token:ETH@base", "authorizationList", "authorization_list",
		"authorization_endpoint", "password_file", "PASSWORD_FILE", "passwordfile",
		"token_path", "tokenPath", "secret_name", "secretName", "api_key_env",
		"private_key_path", "cookie_file", "password-stdin",
	}
	for _, key := range secret {
		t.Run("secret/"+key, func(t *testing.T) {
			if !IsSecretKey(key) {
				t.Errorf("IsSecretKey(%q) = false, want true", key)
			}
		})
	}
	for _, key := range harmless {
		t.Run("harmless/"+key, func(t *testing.T) {
			if IsSecretKey(key) {
				t.Errorf("IsSecretKey(%q) = true, want false", key)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		key  string
		want keyKind
	}{
		{"token", bareToken},
		{"Token", bareToken},
		{"TOKEN", bareToken},
		{"access_token", secretKey},
		{"seed", seedKey},
		{"random_seed", seedKey},
		{"seed_phrase", secretKey},
		{"password", secretKey},
		{"max_tokens", notSecret},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := classify(tt.key); got != tt.want {
				t.Errorf("classify(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestSecretValue(t *testing.T) {
	tests := []struct {
		kind  keyKind
		value string
		want  bool
	}{
		{bareToken, "ETH", false},
		{bareToken, "USDC", false},
		{bareToken, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", false},
		{bareToken, "abc123", true},
		{bareToken, "E", true},
		{bareToken, "ABCDEFGHIJKLMNOP", true},
		{bareToken, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA0291", true},
		{seedKey, "42", false},
		{seedKey, "-1", false},
		{seedKey, "0x" + fakeTail(64, hexLower), true},
		{seedKey, "abandon abandon", true},
		{secretKey, "ETH", true},
		{secretKey, "42", true},
		{notSecret, "anything", false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			if got := secretValue(tt.kind, tt.value); got != tt.want {
				t.Errorf("secretValue(%v, %q) = %v, want %v", tt.kind, tt.value, got, tt.want)
			}
		})
	}
}

func TestSplitKey(t *testing.T) {
	tests := []struct {
		key  string
		want []string
	}{
		{"api_key", []string{"api", "key"}},
		{"apiKey", []string{"api", "key"}},
		{"APIKey", []string{"api", "key"}},
		{"X-API-KEY", []string{"x", "api", "key"}},
		{"oauth2Token", []string{"oauth2", "token"}},
		{"token0", []string{"token0"}},
		{"db.password", []string{"db", "password"}},
		{"__a__", []string{"a"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			flat, spans := splitKey(tt.key, nil, nil)
			var got []string
			for _, w := range spans {
				got = append(got, string(flat[w.lo:w.hi]))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("splitKey(%q) = %q, want %q", tt.key, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("splitKey(%q) = %q, want %q", tt.key, got, tt.want)
				}
			}
		})
	}
}
