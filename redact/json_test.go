package redact

import (
	"encoding/json"
	"testing"
)

// jsonCases returns the JSON table; the fuzz test is seeded from it.
func jsonCases() []stringCase {
	ghp := fakeSecrets["github-ghp"]
	return []stringCase{
		{"empty", "", ""},
		{"clean", `{"command":"ls -la","cwd":"/tmp"}`, `{"command":"ls -la","cwd":"/tmp"}`},
		{"secret-string", `{"password":"hunter2","user":"bob"}`, `{"password":"[REDACTED]","user":"bob"}`},
		{"secret-number", `{"pin_password":1234}`, `{"pin_password":"[REDACTED]"}`},
		{"secret-null", `{"token":null}`, `{"token":"[REDACTED]"}`},
		{"secret-object", `{"credentials":{"user":"a","n":[1,2,{"x":"}"}]},"ok":true}`, `{"credentials":"[REDACTED]","ok":true}`},
		{"secret-array", `{"api_keys":["a","b"],"n":1}`, `{"api_keys":"[REDACTED]","n":1}`},
		{"nested-key", `{"headers":{"Authorization":"Bearer abc","Accept":"*/*"}}`, `{"headers":{"Authorization":"[REDACTED]","Accept":"*/*"}}`},
		{"escaped-key", `{"pass\u0077ord":"x"}`, `{"pass\u0077ord":"[REDACTED]"}`},
		{"shape-in-value", `{"command":"git push https://` + ghp + `@github.com/o/r"}`, `{"command":"git push https://[REDACTED]@github.com/o/r"}`},
		{"pair-in-value", `{"command":"export OPENAI_API_KEY=abc123 && run"}`, `{"command":"export OPENAI_API_KEY=[REDACTED] && run"}`},
		{"escaped-value", `{"cmd":"curl -H \"Authorization: Bearer abc123\" <x>"}`, `{"cmd":"curl -H \"Authorization: Bearer [REDACTED]\" <x>"}`},
		{"nested-json-string", `{"arguments":"{\"api_key\": \"abc\"}"}`, `{"arguments":"{\"api_key\": \"[REDACTED]\"}"}`},
		{"harmless-keys", `{"max_tokens":1024,"token_in":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","tokens":5}`, `{"max_tokens":1024,"token_in":"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48","tokens":5}`},
		{"numbers-kept", `{"amount_usd":1.50,"big":12345678901234567890123,"e":1E+2,"neg":-0.0}`, `{"amount_usd":1.50,"big":12345678901234567890123,"e":1E+2,"neg":-0.0}`},
		{"order-and-space-kept", "{\n  \"z\": 1,\n  \"secret\": [1, 2],\n  \"a\": \"x\"\n}", "{\n  \"z\": 1,\n  \"secret\": \"[REDACTED]\",\n  \"a\": \"x\"\n}"},
		{"top-level-string", `"sk_live_` + fakeTail(24, alphaNum) + `"`, `"[REDACTED]"`},
		{"top-level-array", `["ok", "` + ghp + `"]`, `["ok", "[REDACTED]"]`},
		{"top-level-number", ` 42 `, ` 42 `},
		{"invalid", `password=hunter2 {`, `"password=[REDACTED] {"`},
		{"invalid-plain", `not json`, `"not json"`},
		{"invalid-escapes", "a\"b\\c\n<d>", `"a\"b\\c\n<d>"`},
		{"whitespace-only", "  ", `"  "`},
		{"masked", `{"token":"[REDACTED]"}`, `{"token":"[REDACTED]"}`},
		{"token-ticker", `{"token":"ETH","amount_usd":10}`, `{"token":"ETH","amount_usd":10}`},
		{"token-address", `{"token":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}`, `{"token":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"}`},
		{"token-credential", `{"token":"abc123def"}`, `{"token":"[REDACTED]"}`},
		{"token-number", `{"token":12345}`, `{"token":"[REDACTED]"}`},
		{"token-coin-object", `{"token": {"symbol": "USDC", "address": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6}}`, `{"token": {"symbol": "USDC", "address": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "decimals": 6}}`},
		{"token-coin-object-secret-member", `{"token": {"symbol": "X", "api_key": "k"}}`, `{"token": {"symbol": "X", "api_key": "[REDACTED]"}}`},
		{"token-other-object", `{"token": {"value": "opaque", "expires": 1}}`, `{"token": "[REDACTED]"}`},
		{"token-namespace", `{"exposure_usd": {"token:ETH": 10, "chain:base": 0}}`, `{"exposure_usd": {"token:ETH": 10, "chain:base": 0}}`},
		{"seed-int", `{"model":"x","seed":42,"temperature":0.2}`, `{"model":"x","seed":42,"temperature":0.2}`},
		{"seed-string", `{"seed":"legal winner thank year"}`, `{"seed":"[REDACTED]"}`},
		{"authorization-list", `{"authorizationList":[{"chainId":8453,"address":"0x5B38Da6a701c568545dCfcB03FcB875f56beddC4","nonce":2}]}`, `{"authorizationList":[{"chainId":8453,"address":"0x5B38Da6a701c568545dCfcB03FcB875f56beddC4","nonce":2}]}`},
		{"named-setting", `{"key":"approvals.telegram.token","value":"tg-8172-xyz","by":"root"}`, `{"key":"approvals.telegram.token","value":"[REDACTED]","by":"root"}`},
		{"named-env", `{"env":[{"name":"DB_PASSWORD","value":"Pw12abc"},{"name":"PORT","value":"8080"}]}`, `{"env":[{"name":"DB_PASSWORD","value":"[REDACTED]"},{"name":"PORT","value":"8080"}]}`},
		{"named-header-after", `{"value":"Bearer abc","name":"Authorization"}`, `{"value":"[REDACTED]","name":"Authorization"}`},
		{"named-plain", `{"key":"approvals.timeout","value":"5m"}`, `{"key":"approvals.timeout","value":"5m"}`},
		{"tx-hash-fails-safe", `{"hash":"0x` + fakeTail(64, hexLower) + `"}`, `{"hash":"[REDACTED]"}`},
	}
}

func TestJSON(t *testing.T) {
	for _, tt := range jsonCases() {
		t.Run(tt.name, func(t *testing.T) {
			got := string(JSON(json.RawMessage(tt.in)))
			if got != tt.want {
				t.Errorf("JSON(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("JSON(%q) = %q, which is not valid JSON", tt.in, got)
			}
		})
	}
}

func TestJSONReturnsInputWhenClean(t *testing.T) {
	in := json.RawMessage(`{"command":"ls -la","cwd":"/tmp","n":[1,2,3]}`)
	got := JSON(in)
	if &got[0] != &in[0] {
		t.Errorf("JSON(%q) returned a copy, want raw itself", in)
	}
}

func TestAppendQuoted(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"ascii", "hello"},
		{"controls", "a\x00b\x1fc\x7f"},
		{"quotes", `"\`},
		{"html", "<a&b>"},
		{"unicode", "héllo ✓ \u2028 \u2029"},
		{"invalid-utf8", "a\xffb\xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := appendQuoted(nil, tt.in)
			var back string
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("appendQuoted(%q) = %s, which does not decode: %v", tt.in, got, err)
			}
			want, _ := json.Marshal(tt.in) // Marshal also maps invalid UTF-8 to U+FFFD
			var wantBack string
			_ = json.Unmarshal(want, &wantBack)
			if back != wantBack {
				t.Errorf("appendQuoted(%q) decodes to %q, want %q", tt.in, back, wantBack)
			}
		})
	}
}
