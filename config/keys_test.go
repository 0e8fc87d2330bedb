package config

import (
	"reflect"
	"testing"

	"github.com/agentwarden/warden"
)

func TestGet(t *testing.T) {
	l := mustParse(t, `version: 1
safety:
  dailySpendCap: 12.5
  allowedTokens: [usdc]
tools:
  tiers:
    my_tool: 2
    mcp.github.create_issue: 4
`)
	tests := []struct {
		key  string
		want any
	}{
		{"version", 1},
		{"safety.dailySpendCap", 12.5},
		{"safety.maxTransactionAmount", 500.0},
		{"safety.killSwitchActive", false},
		{"safety.allowedTokens", []any{"USDC"}},
		{"safety.blockedTokens", []any{"SQUID", "SAFEMARS"}},
		{"tools.tiers.my_tool", 2},
		{"tools.tiers.get_price", 1},
		{"tools.tiers.mcp.github.create_issue", 4},
		{"tools.overrides", []any{map[string]any{"tool": "swap_token", "max_amount_usd": 100.0, "tier": 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := l.Get(tt.key)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Get(%q) = %#v, %v; want %#v", tt.key, got, err, tt.want)
			}
		})
	}
	tiers, err := l.Get("tools.tiers")
	if m, ok := tiers.(map[string]any); err != nil || !ok || m["my_tool"] != 2 || m["unkill"] != 4 || len(m) != 13 {
		t.Errorf("Get(tools.tiers) = %#v, %v; want the whole map", tiers, err)
	}
	safety, err := l.Get("safety")
	if m, ok := safety.(map[string]any); err != nil || !ok || m["dailySpendCap"] != 12.5 {
		t.Errorf("Get(safety) = %#v, %v; want the whole section", safety, err)
	}
}

func TestGetErrors(t *testing.T) {
	l := mustParse(t, string(DefaultFile()))
	tests := []struct {
		key  string
		code warden.ErrorCode
		want string
	}{
		{"safety.dailySpendCapp", warden.EInvalid, "unknown key safety.dailySpendCapp; did you mean safety.dailySpendCap?"},
		{"saftey.dailySpendCap", warden.EInvalid, "did you mean safety?"},
		{"telemetry.allow", warden.EInvalid, "want one of version, safety, tools"},
		{"tools.tiers.nope", warden.ENotFound, `tools.tiers has no entry "nope"`},
		{"tools.overrides.0", warden.EInvalid, "tools.overrides is a list"},
		{"safety.dailySpendCap.x", warden.EInvalid, "is a single value"},
		{"safety..x", warden.EInvalid, "is not a key"},
		{"", warden.EInvalid, "is not a key"},
		{"safety.", warden.EInvalid, "is not a key"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			_, err := l.Get(tt.key)
			we := wantCode(t, err, tt.code, tt.want)
			if tt.key == "tools.tiers.nope" && we.Hint != "a tool with no tier is tier 3" {
				t.Errorf("hint = %q", we.Hint)
			}
		})
	}
}

func TestList(t *testing.T) {
	l := mustParse(t, string(DefaultFile()))
	kvs := l.List()
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
		got, err := l.Get(kv.Key)
		if err != nil || !reflect.DeepEqual(got, kv.Value) {
			t.Errorf("Get(%q) = %v, %v; List says %v", kv.Key, got, err, kv.Value)
		}
	}
	want := []string{
		"version",
		"safety.maxTransactionAmount", "safety.dailySpendCap", "safety.killSwitchActive",
		"safety.allowedTokens", "safety.blockedTokens", "safety.autopilotEnabled",
		"tools.tiers.analyze_market", "tools.tiers.buy_token", "tools.tiers.get_balance",
		"tools.tiers.get_price", "tools.tiers.patch", "tools.tiers.read_file",
		"tools.tiers.swap_token", "tools.tiers.transfer_token", "tools.tiers.unkill",
		"tools.tiers.web_search", "tools.tiers.write_file",
		"tools.overrides",
		"tools.denied",
		"shell.allow_task_runners",
		"shell.safe",
		"shell.suspicious",
		"shell.destructive",
		"shell.replacements",
		"shell.host",
		"filesystem.workspace",
		"filesystem.allowed_paths",
		"filesystem.denied_paths",
		"sandbox.mode",
		"sandbox.engine",
		"sandbox.strict",
		"sandbox.unsafe_allow_off",
		"sandbox.unsafe_host_when_unavailable",
		"sandbox.keep_one_shot",
		"sandbox.secret_paths",
		"sandbox.cache_paths",
		"sandbox.protected_paths",
		"sandbox.profiles.default",
		"sandbox.profiles.guard",
		"sandbox.profiles.workspace",
		"network.allowed_domains",
		"network.denied_domains",
		"network.ask_unknown_domains",
		"network.allow_private",
		"network.rate_limit.per_minute",
		"network.rate_limit.per_hour",
		"network.resolver",
		"network.listen",
		"network.secrets",
		"approvals.timeout", "approvals.always", "approvals.telegram.token_env", "approvals.telegram.chat_id", "approvals.telegram.allowed_users",
		"approvals.webhook.url", "approvals.webhook.secret_env", "approvals.daemon.socket", "approvals.daemon.tcp",
		"sizing.strategy", "sizing.fixedAmountUsd", "sizing.fraction", "sizing.kellyMultiplier",
		"exposure.maxPerTokenUsd", "exposure.maxPerChainUsd", "exposure.maxPerAssetClassFraction", "exposure.maxTotalExposureUsd",
		"slippage.maxSlippageSmall", "slippage.maxSlippageMid", "slippage.maxSlippageLarge",
		"slippage.smallTradeBelowUsd", "slippage.largeTradeAboveUsd", "slippage.minOutputRatio", "slippage.maxLeverage",
		// stopLoss.defaultRule is absent by default, so not listed.
		"stopLoss.enabled", "stopLoss.pollIntervalMs", "stopLoss.maxPriceAgeMs", "stopLoss.killSwitchExits",
		"trade.backend", "trade.wallet", "trade.testnets", "trade.recipients",
		"trade.paper.startingUsd", "trade.paper.poolDepthUsd", "trade.paper.pricesFile", "trade.paper.seed", "trade.paper.stepMs", "trade.paper.volatility",
		"trade.http.baseUrl", "trade.http.tokenEnv", "trade.http.timeoutMs",
		"trade.http.endpoints.price", "trade.http.endpoints.portfolio", "trade.http.endpoints.simulate", "trade.http.endpoints.swap",
		"trade.http.endpoints.perpOpen", "trade.http.endpoints.perpClose", "trade.http.endpoints.transfer",
		"signing.keystore", "signing.address", "signing.passphraseFile", "signing.passphraseEnv", "signing.chainIds",
		"signing.maxValueEth", "signing.approvalAboveEth", "signing.maxFeeEth", "signing.perHour", "signing.perDay", "signing.pendingPerRequester",
		"signing.recipients", "signing.contracts", "signing.selectors", "signing.messageDomains",
		"signing.requireHumanConfirmation", "signing.legacyTransactions",
		"signing.unsafeAllowContractCreation",
		"inject.blockScore", "inject.rulesFile",
		"store.dsn", "store.passwordFile", "store.passwordEnv", "store.keyFile",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("List keys = %q\nwant %q", keys, want)
	}
}

func TestFormatValue(t *testing.T) {
	l := mustParse(t, string(DefaultFile()))
	tests := []struct{ key, want string }{
		{"safety.dailySpendCap", "2000"},
		{"safety.killSwitchActive", "false"},
		{"safety.allowedTokens", "[]"},
		{"safety.blockedTokens", `["SQUID","SAFEMARS"]`},
		{"tools.overrides", `[{"max_amount_usd":100,"tier":2,"tool":"swap_token"}]`},
	}
	for _, tt := range tests {
		v, _ := l.Get(tt.key)
		if got := FormatValue(v); got != tt.want {
			t.Errorf("FormatValue(Get(%q)) = %s, want %s", tt.key, got, tt.want)
		}
	}
}

func TestZeroLoadedReportsDefaults(t *testing.T) {
	var l Loaded
	want := mustParse(t, string(DefaultFile())).List()
	if got := l.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("zero Loaded List = %v, want the defaults %v", got, want)
	}
}
