package config

import (
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

const (
	signingKey    = "0x52908400098527886E0F7030069857D2E4169EE7"
	signingOther  = "0xDe709F2102306220921060314715629080E2fB77"
	permit2Mixed  = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
	solanaAddress = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
)

// weiN parses a whole number of wei.
func weiN(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad wei " + s)
	}
	return n
}

// defaultSigning is the signing section's documented defaults.
func defaultSigning() Signing {
	return Signing{
		ChainIDs:            []int64{1, 8453, 42161, 10},
		MaxValue:            weiN("100000000000000000"),
		ApprovalAbove:       weiN("10000000000000000"),
		MaxFee:              weiN("10000000000000000"),
		PerHour:             10,
		PerDay:              50,
		PendingPerRequester: 3,
		Recipients:          []string{},
		Contracts:           []string{"0x000000000022d473030f116ddee9f6b43ac78ba3"},
		Selectors:           []string{"0xa9059cbb", "0x095ea7b3"},
		MessageDomains:      []string{},
	}
}

// sameSigning reports whether a and b hold the same values, comparing the
// amounts as numbers.
func sameSigning(a, b Signing) bool {
	for _, p := range [][2]*big.Int{{a.MaxValue, b.MaxValue}, {a.ApprovalAbove, b.ApprovalAbove}, {a.MaxFee, b.MaxFee}} {
		if (p[0] == nil) != (p[1] == nil) || p[0] != nil && p[0].Cmp(p[1]) != 0 {
			return false
		}
	}
	a.MaxValue, a.ApprovalAbove, a.MaxFee = nil, nil, nil
	b.MaxValue, b.ApprovalAbove, b.MaxFee = nil, nil, nil
	return reflect.DeepEqual(a, b)
}

// parseSigning parses a file whose signing section is body (indented by
// two spaces here; the body starts on line 3).
func parseSigning(t *testing.T, body string) *Loaded {
	t.Helper()
	src := "version: 1\nsigning:\n"
	for line := range strings.Lines(body) {
		src += "  " + line
	}
	return mustParse(t, src+"\n")
}

// checkSigningPolicy fails when s holds a value the signer must never run
// on.
func checkSigningPolicy(t testing.TB, s Signing) {
	t.Helper()
	if s.ChainIDs == nil || slices.ContainsFunc(s.ChainIDs, func(id int64) bool { return id <= 0 }) {
		t.Fatalf("bad signing chain ids %v", s.ChainIDs)
	}
	if s.MaxValue == nil || s.ApprovalAbove == nil || s.MaxFee == nil ||
		s.MaxValue.Sign() <= 0 || s.MaxFee.Sign() <= 0 || s.ApprovalAbove.Sign() < 0 || s.ApprovalAbove.Cmp(s.MaxValue) > 0 {
		t.Fatalf("bad signing amounts %v %v %v", s.MaxValue, s.ApprovalAbove, s.MaxFee)
	}
	if s.PerHour < 1 || s.PerHour > 10_000 || s.PerDay < s.PerHour || s.PerDay > 100_000 {
		t.Fatalf("bad signing rates %d/h %d/day", s.PerHour, s.PerDay)
	}
	evm := func(a string) bool { return isEVMAddress(a) && !isZeroAddress(a) && a == strings.ToLower(a) }
	if s.Address != "" && !evm(s.Address) {
		t.Fatalf("bad signing address %q", s.Address)
	}
	for _, list := range [][]string{s.Recipients, s.Contracts} {
		if list == nil || slices.ContainsFunc(list, func(a string) bool { return !evm(a) }) {
			t.Fatalf("bad signing addresses %q", list)
		}
	}
	if s.Selectors == nil || slices.ContainsFunc(s.Selectors, func(x string) bool { return !isSelector(x) || x != strings.ToLower(x) }) {
		t.Fatalf("bad signing selectors %q", s.Selectors)
	}
	if s.MessageDomains == nil || slices.ContainsFunc(s.MessageDomains, func(d string) bool { return badHostName(d) != "" || d != strings.ToLower(d) }) {
		t.Fatalf("bad signing domains %q", s.MessageDomains)
	}
	if s.PassphraseEnv != "" && (!upperEnvName(s.PassphraseEnv) || s.PassphraseFile != "") {
		t.Fatalf("bad passphrase sources %q, %q", s.PassphraseFile, s.PassphraseEnv)
	}
	for _, p := range []string{s.Keystore, s.PassphraseFile} {
		if p != "" && badHomePath(p) != "" {
			t.Fatalf("bad signing path %q", p)
		}
	}
}

func TestSigningDefaults(t *testing.T) {
	for _, tt := range []struct {
		name string
		got  Signing
	}{
		{"no section", mustParse(t, "version: 1\n").Policy.Signing},
		{"empty section", mustParse(t, "version: 1\nsigning:\n").Policy.Signing},
		{"default file", mustParse(t, string(DefaultFile())).Policy.Signing},
		{"Default", Default().Signing},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if want := defaultSigning(); !sameSigning(tt.got, want) {
				t.Errorf("signing = %+v\nwant %+v", tt.got, want)
			}
			if tt.got.MaxValue.String() != "100000000000000000" {
				t.Errorf("MaxValue = %v wei, want exactly 0.1 ETH = 100000000000000000 wei", tt.got.MaxValue)
			}
			checkSigningPolicy(t, tt.got)
		})
	}
	a, b := Default().Signing, Default().Signing
	a.MaxValue.SetInt64(1)
	a.Contracts[0] = "x"
	if b.MaxValue.Cmp(weiN("100000000000000000")) != 0 || b.Contracts[0] != permit2 {
		t.Errorf("Default shares signing state between calls: %+v", b)
	}
}

func TestSigningValues(t *testing.T) {
	tests := []struct {
		name, body string
		got        func(Signing) any
		want       any
	}{
		{"absolute keystore", "keystore: /var/lib/warden/keys", func(s Signing) any { return s.Keystore }, "/var/lib/warden/keys"},
		{"home keystore", "keystore: ~/keys", func(s Signing) any { return s.Keystore }, "~/keys"},
		{"address lower-cased", "address: '" + signingKey + "'", func(s Signing) any { return s.Address }, strings.ToLower(signingKey)},
		{"address unquoted", "address: " + signingKey, func(s Signing) any { return s.Address }, strings.ToLower(signingKey)},
		{"passphrase file", "passphraseFile: ~/.config/warden/passphrase", func(s Signing) any { return s.PassphraseFile }, "~/.config/warden/passphrase"},
		{"passphrase env", "passphraseEnv: WARDEN_SIGNER_PASSPHRASE", func(s Signing) any { return s.PassphraseEnv }, "WARDEN_SIGNER_PASSPHRASE"},
		{"one chain", "chainIds: [11155111]", func(s Signing) any { return s.ChainIDs }, []int64{11155111}},
		{"chains as a block list", "chainIds:\n  - 1\n  - 0x2105", func(s Signing) any { return s.ChainIDs }, []int64{1, 8453}},
		{"whole ETH", "maxValueEth: 2", func(s Signing) any { return s.MaxValue.String() }, "2000000000000000000"},
		{"one wei", "maxFeeEth: 0.000000000000000001", func(s Signing) any { return s.MaxFee.String() }, "1"},
		{"no approval threshold", "approvalAboveEth: 0", func(s Signing) any { return s.ApprovalAbove.String() }, "0"},
		{"approval at the maximum", "approvalAboveEth: 0.1", func(s Signing) any { return s.ApprovalAbove.String() }, "100000000000000000"},
		{"one signature", "perHour: 1\nperDay: 1", func(s Signing) any { return [2]int{s.PerHour, s.PerDay} }, [2]int{1, 1}},
		{"most signatures", "perHour: 10000\nperDay: 100000", func(s Signing) any { return [2]int{s.PerHour, s.PerDay} }, [2]int{10000, 100000}},
		{"recipients lower-cased", "recipients: ['" + signingOther + "']", func(s Signing) any { return s.Recipients }, []string{strings.ToLower(signingOther)}},
		{"no contracts", "contracts: []", func(s Signing) any { return s.Contracts }, []string{}},
		{"contracts lower-cased", "contracts: [" + permit2Mixed + ", " + signingOther + "]", func(s Signing) any { return s.Contracts }, []string{permit2, strings.ToLower(signingOther)}},
		{"selectors lower-cased", `selectors: ["0xA9059CBB", 0x095ea7b3]`, func(s Signing) any { return s.Selectors }, []string{"0xa9059cbb", "0x095ea7b3"}},
		{"no selectors", "selectors: []", func(s Signing) any { return s.Selectors }, []string{}},
		{"domains lower-cased", "messageDomains: [App.Example.COM, localhost]", func(s Signing) any { return s.MessageDomains }, []string{"app.example.com", "localhost"}},
		{"switches on", "requireHumanConfirmation: true\nlegacyTransactions: true\nunsafeAllowContractCreation: true",
			func(s Signing) any {
				return []bool{s.RequireHuman, s.Legacy, s.UnsafeContractCreation}
			}, []bool{true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := parseSigning(t, tt.body)
			if len(l.Problems) != 0 {
				t.Fatalf("problems: %v", l.Problems)
			}
			if got := tt.got(l.Policy.Signing); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("signing %q = %#v, want %#v", tt.body, got, tt.want)
			}
			checkSigningPolicy(t, l.Policy.Signing)
		})
	}
}

// ETH amounts are converted to wei from the number as written, never through
// a float64's rounding.
func TestSigningExactWei(t *testing.T) {
	tests := []struct {
		name, value string
		want        string // wei; "" means refused
	}{
		{"0.1", "0.1", "100000000000000000"},
		{"18 significant decimals", "0.123456789012345678", "123456789012345678"},
		{"whole and 18 decimals", "12345678.123456789012345678", "12345678123456789012345678"},
		{"one wei", "0.000000000000000001", "1"},
		{"one wei as an exponent", "1e-18", "1"},
		{"exponent", "1.5e-3", "1500000000000000"},
		{"positive exponent", "2.5E+1", "25000000000000000000"},
		{"trailing zeros past 18 decimals", "0.10000000000000000000", "100000000000000000"},
		{"leading point", ".5", "500000000000000000"},
		{"trailing point", "3.", "3000000000000000000"},
		{"integer", "7", "7000000000000000000"},
		{"hex integer", "0x10", "16000000000000000000"},
		{"19 decimals", "0.1234567890123456789", ""},
		{"19th decimal alone", "0.0000000000000000001", ""},
		{"below one wei as an exponent", "1e-19", ""},
		{"half a wei", "1.5e-18", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := parseSigning(t, "approvalAboveEth: 0\nmaxValueEth: "+tt.value)
			if tt.want == "" {
				p := problemAt(t, l, "signing.maxValueEth")
				if p.Line != 4 || !strings.Contains(p.Message, "has more than 18 decimals") {
					t.Errorf("maxValueEth %s: problem = %v, want more than 18 decimals", tt.value, p)
				}
				if got := l.Policy.Signing.MaxValue.String(); got != "100000000000000000" {
					t.Errorf("maxValueEth %s: fallback MaxValue = %s, want the default", tt.value, got)
				}
				return
			}
			if len(l.Problems) != 0 {
				t.Fatalf("maxValueEth %s: problems %v", tt.value, l.Problems)
			}
			if got := l.Policy.Signing.MaxValue.String(); got != tt.want {
				t.Errorf("maxValueEth %s = %s wei, want %s", tt.value, got, tt.want)
			}
		})
	}
}

func TestWeiFromDecimal(t *testing.T) {
	tests := []struct {
		in        string
		want      string // "" when not ok or not exact
		ok, exact bool
	}{
		{"0", "0", true, true},
		{"-0.0", "0", true, true},
		{"+1.25", "1250000000000000000", true, true},
		{"1e+2", "100000000000000000000", true, true},
		{"0e99999999999999999999", "0", true, true},
		{"1e99999999999999999999", "", false, false},
		{"1e-20", "", true, false},
		{"-1", "", false, false},
		{"", "", false, false},
		{".", "", false, false},
		{"1.2.3", "", false, false},
		{"1e", "", false, false},
		{"0x10", "", false, false},
		{".inf", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			wei, ok, exact := weiFromDecimal(tt.in)
			got := ""
			if wei != nil {
				got = wei.String()
			}
			if got != tt.want || ok != tt.ok || exact != tt.exact {
				t.Errorf("weiFromDecimal(%q) = %q, %v, %v; want %q, %v, %v", tt.in, got, ok, exact, tt.want, tt.ok, tt.exact)
			}
		})
	}
}

func TestSigningSectionProblems(t *testing.T) {
	testRefusals(t, "signing", []badBody{
		{"relative keystore", "keystore: keys", "signing.keystore", 3, `keystore "keys" is not an absolute path and does not start with ~/`},
		{"keystore with a control character", "keystore: \"/keys\\n\"", "signing.keystore", 3, "has a control character"},
		{"short address", "address: '0xabc'", "signing.address", 3, `"0xabc" is not an EVM address (0x and 40 hex digits)`},
		{"Solana address", "address: " + solanaAddress, "signing.address", 3, "is not an EVM address"},
		{"zero address", "address: '0x0000000000000000000000000000000000000000'", "signing.address", 3, "is the zero address"},
		{"relative passphrase file", "passphraseFile: pass.txt", "signing.passphraseFile", 3, "passphraseFile is not an absolute path and does not start with ~/"},
		{"lower-case passphrase env", "passphraseEnv: signer_pass", "signing.passphraseEnv", 3, "passphraseEnv is not an environment variable name"},
		{"both passphrase sources", "passphraseFile: ~/pass\npassphraseEnv: WARDEN_SIGNER_PASSPHRASE", "signing.passphraseEnv", 4, "passphraseFile and passphraseEnv are both set; want one of them"},
		{"zero max value", "maxValueEth: 0", "signing.maxValueEth", 3, "0 is too small; want an amount of ETH above 0"},
		{"negative max value", "maxValueEth: -1", "signing.maxValueEth", 3, "-1 is negative"},
		{"infinite max value", "maxValueEth: .inf", "signing.maxValueEth", 3, "+Inf is not a finite number"},
		{"max value as a string", "maxValueEth: '0.1'", "signing.maxValueEth", 3, `got "0.1" (a string); want an amount of ETH above 0`},
		{"max value of 19 decimals", "maxValueEth: 0.1234567890123456789", "signing.maxValueEth", 3, "0.1234567890123456789 has more than 18 decimals"},
		{"max value above the bound", "maxValueEth: 1e10", "signing.maxValueEth", 3, "is too large"},
		{"negative approval threshold", "approvalAboveEth: -0.5", "signing.approvalAboveEth", 3, "-0.5 is negative; want an amount of ETH from 0 to maxValueEth"},
		{"approval above the maximum", "approvalAboveEth: 0.2", "signing.approvalAboveEth", 3, "0.2 is above maxValueEth (0.1)"},
		{"approval above a lower maximum", "maxValueEth: 1\napprovalAboveEth: 1.5", "signing.approvalAboveEth", 4, "1.5 is above maxValueEth (1)"},
		// A float64 reads this as 0, which approvalAboveEth allows; as written it is not 0.
		{"approval threshold far below a wei", "approvalAboveEth: 1e-99999999999999999999", "signing.approvalAboveEth", 3, "1e-99999999999999999999 has more than 18 decimals"},
		{"zero fee", "maxFeeEth: 0", "signing.maxFeeEth", 3, "0 is too small"},
		{"fee below a wei", "maxFeeEth: 1e-19", "signing.maxFeeEth", 3, "1e-19 has more than 18 decimals"},
		{"no signatures an hour", "perHour: 0", "signing.perHour", 3, "0 is too small; want a whole number of signatures from 1 to 10000"},
		{"too many an hour", "perHour: 10001\nperDay: 100000", "signing.perHour", 3, "10001 is too large"},
		{"hourly above daily", "perHour: 60", "signing.perHour", 3, "60 is above perDay (50)"},
		{"too many a day", "perDay: 100001", "signing.perDay", 3, "100001 is too large"},
		{"no pending asks", "pendingPerRequester: 0", "signing.pendingPerRequester", 3, "0 is too small; want a whole number of asks from 1 to 10000"},
		{"fractional rate", "perHour: 1.5", "signing.perHour", 3, "got 1.5 (a number); want a whole number of signatures"},
		{"bad recipient", "recipients: [" + signingOther + ", alice.eth]", "signing.recipients[1]", 3, `"alice.eth" is not an EVM address`},
		{"Solana recipient", "recipients:\n  - " + solanaAddress, "signing.recipients[0]", 4, "is not an EVM address"},
		{"recipients as a word", "recipients: " + signingOther, "signing.recipients", 3, "want a list of EVM addresses"},
		{"bad contract", "contracts: [" + permit2Mixed + ", '0x1234']", "signing.contracts[1]", 3, `"0x1234" is not an EVM address`},
		{"zero contract", "contracts: [" + permit2Mixed + ", '0x0000000000000000000000000000000000000000']", "signing.contracts[1]", 3, "is the zero address"},
		{"selector by name", `selectors: ["0xa9059cbb", "0x095ea7b3", transfer]`, "signing.selectors[2]", 3, `"transfer" is not a method selector; want 0x and 8 hex digits`},
		{"short selector", `selectors: ["0xa9059cbb", "0x095ea7b3", "0xa9059c"]`, "signing.selectors[2]", 3, "is not a method selector"},
		{"domain with a scheme", "messageDomains: ['https://app.example.com']", "signing.messageDomains[0]", 3, "has a scheme"},
		{"domain with a port", "messageDomains: ['app.example.com:3000']", "signing.messageDomains[0]", 3, "is not a host name"},
		{"domain with a path", "messageDomains: [app.example.com/login]", "signing.messageDomains[0]", 3, "is not a host name"},
		{"empty domain", "messageDomains: ['']", "signing.messageDomains[0]", 3, "is empty"},
		{"switch as a word", "legacyTransactions: yes", "signing.legacyTransactions", 3, `got "yes" (a string); want true or false`},
		{"misspelled key", "maxValueETH: 1", "signing.maxValueETH", 3, "unknown key; did you mean signing.maxValueEth?"},
		{"snake case key", "chain_ids: [1]", "signing.chain_ids", 3, "unknown key; did you mean signing.chainIds?"},
		{"unknown key", "gasLimit: 21000", "signing.gasLimit", 3, "unknown key; want one of keystore, address, passphraseFile, passphraseEnv, chainIds, maxValueEth"},
		{"section as a list", "- maxValueEth: 1", "signing", 3, "got a list; want a mapping"},
	}, func(p *Policy) any { return p.Signing })
}

// Neither passphrase key repeats its value in a problem, which is logged and
// audited: it may be the passphrase itself.
func TestSigningPassphraseIsNeverEchoed(t *testing.T) {
	const secret = "correct horse battery staple"
	for _, body := range []string{
		"passphraseEnv: '" + secret + "'",
		"passphraseFile: '" + secret + "'",
		"passphraseFile: '" + secret + "'\npassphraseEnv: WARDEN_X",
	} {
		t.Run(body, func(t *testing.T) {
			l := parseSigning(t, body)
			if len(l.Problems) == 0 {
				t.Fatalf("no problem for %q", body)
			}
			for _, p := range l.Problems {
				if strings.Contains(p.Error(), secret) {
					t.Errorf("problem %q repeats the secret", p.Error())
				}
			}
			if s := l.Policy.Signing; s.PassphraseEnv != "" || s.PassphraseFile != "" {
				t.Errorf("passphrase sources kept: %q, %q", s.PassphraseFile, s.PassphraseEnv)
			}
		})
	}
	path := writeFile(t, DefaultFile())
	err := Set(path, "signing.passphraseEnv", secret)
	if we := wantCode(t, err, warden.EInvalid, "passphraseEnv is not an environment variable name"); strings.Contains(we.Error(), secret) {
		t.Errorf("Set error %q repeats the secret", we.Error())
	}
}

// An invalid signing section falls back to the defaults, but never to
// anything looser than the file: every limit it makes stricter is kept.
func TestSigningFailClosed(t *testing.T) {
	with := func(f func(*Signing)) Signing {
		s := defaultSigning()
		f(&s)
		return s
	}
	tests := []struct {
		name string
		src  string // the whole file; "" means "version: 1\nsigning:\n" and body
		body string
		want Signing
		note string // part of the fallback note
	}{
		{
			name: "stricter limits kept",
			body: "maxValueEth: 0.05\napprovalAboveEth: 0.001\nmaxFeeEth: 0.002\nperHour: 3\nperDay: 20\nbogus: 1",
			want: with(func(s *Signing) {
				s.MaxValue, s.ApprovalAbove, s.MaxFee = weiN("50000000000000000"), weiN("1000000000000000"), weiN("2000000000000000")
				s.PerHour, s.PerDay = 3, 20
			}),
			note: "kept from the file: maxValueEth, approvalAboveEth, maxFeeEth, perHour, perDay",
		},
		{
			name: "looser limits dropped",
			body: "maxValueEth: 5\napprovalAboveEth: 1\nmaxFeeEth: 1\nperHour: 100\nperDay: 1000\nbogus: 1",
			want: defaultSigning(),
			note: "no unsafe switch or legacy signing applies",
		},
		{
			name: "exact odd decimal kept",
			body: "maxValueEth: 0.012345678901234567\nbogus: 1",
			want: with(func(s *Signing) { s.MaxValue = weiN("12345678901234567") }),
			note: "maxValueEth",
		},
		{
			name: "inexact lower amount not kept",
			body: "maxFeeEth: 0.0012345678901234567",
			want: defaultSigning(),
		},
		{
			name: "lower maximum lowers the approval threshold",
			body: "maxValueEth: 0.005",
			want: with(func(s *Signing) { s.MaxValue, s.ApprovalAbove = weiN("5000000000000000"), weiN("5000000000000000") }),
			note: "maxValueEth",
		},
		{
			name: "lower daily rate lowers the hourly one",
			body: "perDay: 5",
			want: with(func(s *Signing) { s.PerHour, s.PerDay = 5, 5 }),
			note: "perDay",
		},
		{
			name: "key given twice keeps the strictest",
			body: "perHour: 5\nperHour: 2",
			want: with(func(s *Signing) { s.PerHour = 2 }),
			note: "perHour",
		},
		{
			name: "section given twice keeps both",
			src:  "version: 1\nsigning:\n  maxValueEth: 0.05\nsigning:\n  perHour: 2\n",
			want: with(func(s *Signing) { s.MaxValue, s.PerHour = weiN("50000000000000000"), 2 }),
			note: "maxValueEth, perHour",
		},
		{
			name: "unsafe switches off",
			body: "unsafeAllowContractCreation: true\nlegacyTransactions: true\nbogus: 1",
			want: defaultSigning(),
		},
		{
			name: "human confirmation stays on",
			body: "requireHumanConfirmation: true\nbogus: 1",
			want: with(func(s *Signing) { s.RequireHuman = true }),
			note: "requireHumanConfirmation",
		},
		{
			name: "misspelled human confirmation stays on",
			body: "requireHumanConfirmaton: yes",
			want: with(func(s *Signing) { s.RequireHuman = true }),
		},
		{
			name: "longer lists dropped",
			body: "recipients: [" + signingOther + "]\nmessageDomains: [app.example.com]\ncontracts: [" + permit2Mixed + ", " + signingOther + "]\n" +
				`selectors: ["0xa9059cbb", "0x095ea7b3", "0x23b872dd"]` + "\nchainIds: [1, 8453, 42161, 10, 137]\nbogus: 1",
			want: defaultSigning(),
		},
		{
			name: "shorter lists kept",
			body: "contracts: []\nselectors: [\"0xA9059CBB\"]\nchainIds: [8453]\nbogus: 1",
			want: with(func(s *Signing) {
				s.Contracts, s.Selectors, s.ChainIDs = []string{}, []string{"0xa9059cbb"}, []int64{8453}
			}),
			note: "contracts, selectors, chainIds",
		},
		{
			name: "a bad item drops only itself",
			body: "contracts: [" + permit2Mixed + ", '0x1234']\nselectors: [\"0xa9059cbb\", approve]",
			want: with(func(s *Signing) { s.Selectors = []string{"0xa9059cbb"} }),
			note: "selectors",
		},
		{
			name: "no default chain leaves none",
			body: "chainIds: [11155111]\nbogus: 1",
			want: with(func(s *Signing) { s.ChainIDs = []int64{} }),
			note: "chainIds",
		},
		{
			name: "invalid chain list leaves none",
			body: "chainIds: [0]",
			want: with(func(s *Signing) { s.ChainIDs = []int64{} }),
		},
		{
			name: "empty chain list leaves none",
			body: "chainIds: []",
			want: with(func(s *Signing) { s.ChainIDs = []int64{} }),
		},
		{
			name: "the named key keeps signing",
			body: "keystore: ~/keys\naddress: '" + signingKey + "'\npassphraseEnv: WARDEN_PASS\nbogus: 1",
			want: with(func(s *Signing) { s.Keystore, s.Address = "~/keys", strings.ToLower(signingKey) }),
			note: "address, keystore",
		},
		{
			name: "both passphrase sources",
			body: "passphraseFile: ~/pass\npassphraseEnv: WARDEN_PASS",
			want: defaultSigning(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l *Loaded
			if tt.src != "" {
				l = mustParse(t, tt.src)
			} else {
				l = parseSigning(t, tt.body)
			}
			i := slices.IndexFunc(l.Problems, func(p Problem) bool {
				return p.Key == "signing" && strings.HasPrefix(p.Message, fallbackMessage)
			})
			if i < 0 {
				t.Fatalf("no fallback problem; problems: %v", l.Problems)
			}
			if p := l.Problems[i]; !strings.Contains(p.Message, tt.note) {
				t.Errorf("fallback problem = %v, want a note with %q", p, tt.note)
			}
			if got := l.Policy.Signing; !sameSigning(got, tt.want) {
				t.Errorf("signing = %+v\nwant %+v", got, tt.want)
			}
			for _, q := range l.Problems {
				if strings.Contains(q.Message, "WARDEN_PASS") && q.Key == "signing" {
					t.Errorf("fallback note names the passphrase variable: %v", q)
				}
			}
			checkPolicy(t, l.Policy)
		})
	}
}

// Every signing key can be read with Get and written with Set (`warden
// config get/set`).
func TestSetSigningKeys(t *testing.T) {
	tests := []struct {
		name, key, value string
		want             string // Get's value after Set, as FormatValue prints it; "" for value itself
		refused          string // part of the error when Set refuses
	}{
		{name: "keystore", key: "signing.keystore", value: "~/keys", want: `"~/keys"`},
		{name: "address", key: "signing.address", value: signingKey, want: `"` + strings.ToLower(signingKey) + `"`},
		{name: "passphrase file", key: "signing.passphraseFile", value: "/run/secrets/warden", want: `"/run/secrets/warden"`},
		{name: "passphrase env", key: "signing.passphraseEnv", value: "WARDEN_SIGNER_PASSPHRASE", want: `"WARDEN_SIGNER_PASSPHRASE"`},
		{name: "chains", key: "signing.chainIds", value: "[1, 10]", want: "[1,10]"},
		{name: "max value", key: "signing.maxValueEth", value: "0.05"},
		{name: "approval threshold", key: "signing.approvalAboveEth", value: "0"},
		{name: "max fee", key: "signing.maxFeeEth", value: "0.002"},
		{name: "per hour", key: "signing.perHour", value: "5"},
		{name: "per day", key: "signing.perDay", value: "500"},
		{name: "recipients", key: "signing.recipients", value: `["` + signingOther + `"]`, want: `["` + strings.ToLower(signingOther) + `"]`},
		{name: "contracts", key: "signing.contracts", value: "[]"},
		{name: "selectors", key: "signing.selectors", value: `["0xA9059CBB"]`, want: `["0xa9059cbb"]`},
		{name: "message domains", key: "signing.messageDomains", value: `["app.example.com"]`},
		{name: "human confirmation", key: "signing.requireHumanConfirmation", value: "true"},
		{name: "legacy", key: "signing.legacyTransactions", value: "true"},
		{name: "contract creation", key: "signing.unsafeAllowContractCreation", value: "true"},
		{name: "rate too low", key: "signing.perHour", value: "0", refused: "cannot set signing.perHour: 0 is too small"},
		// The default file sets both keys of a pair; the problem is at the second.
		{name: "hourly above daily", key: "signing.perHour", value: "60", refused: "cannot set signing.perHour: signing.perDay: 50 is below perHour (60)"},
		{name: "maximum below the approval threshold", key: "signing.maxValueEth", value: "0.005",
			refused: "cannot set signing.maxValueEth: signing.approvalAboveEth: 0.01 is above maxValueEth (0.005)"},
		{name: "19 decimals", key: "signing.maxFeeEth", value: "0.0000000000000000001", refused: "has more than 18 decimals"},
		{name: "no chain", key: "signing.chainIds", value: "[]", refused: "chainIds is empty"},
		{name: "Solana address", key: "signing.address", value: solanaAddress, refused: "is not an EVM address"},
		{name: "a list item", key: "signing.selectors.0", value: "0xa9059cbb", refused: "signing.selectors is a list"},
		{name: "misspelled key", key: "signing.perhour", value: "5", refused: "unknown key signing.perhour; did you mean signing.perHour?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := setOnDefault(t, tt.key, tt.value, tt.refused)
			if l == nil {
				return
			}
			want := tt.want
			if want == "" {
				want = tt.value
			}
			if v, err := l.Get(tt.key); err != nil || FormatValue(v) != want {
				t.Errorf("Get(%q) = %s, %v; want %s", tt.key, FormatValue(v), err, want)
			}
			checkPolicy(t, l.Policy)
		})
	}

	// An odd decimal set from the command line keeps every digit.
	p := writeFile(t, DefaultFile())
	if err := Set(p, "signing.maxValueEth", "0.123456789012345678"); err != nil {
		t.Fatal(err)
	}
	l, err := Load(p)
	if err != nil || len(l.Problems) != 0 {
		t.Fatalf("Load = %v, %v", err, l.Problems)
	}
	if got := l.Policy.Signing.MaxValue.String(); got != "123456789012345678" {
		t.Errorf("MaxValue after Set 0.123456789012345678 = %s wei, want 123456789012345678", got)
	}
	if text := string(readBytes(t, p)); !strings.Contains(text, "maxValueEth: 0.123456789012345678 # most native value") {
		t.Errorf("maxValueEth not written as given, with its comment:\n%s", text)
	}
}
