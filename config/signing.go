package config

import (
	"errors"
	"math/big"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agentwarden/warden/internal/clip"
	yaml "go.yaml.in/yaml/v3"
)

// signingFile is the signing section as written in warden.yaml.
type signingFile struct {
	Keystore                    string   `yaml:"keystore" want:"a directory path, absolute or starting with ~/ (\"\" for $WARDEN_HOME/keys)"`
	Address                     string   `yaml:"address" want:"an EVM address (0x and 40 hex digits), or \"\" for the only key in the keystore"`
	PassphraseFile              string   `yaml:"passphraseFile" want:"a file path, absolute or starting with ~/ (\"\" for none)"`
	PassphraseEnv               string   `yaml:"passphraseEnv" want:"an environment variable name such as WARDEN_SIGNER_PASSPHRASE (\"\" for none)"`
	ChainIDs                    []int64  `yaml:"chainIds" want:"a list of chain ids, e.g. [1, 8453]" elem:"a chain id (a whole number above 0)"`
	MaxValueEth                 float64  `yaml:"maxValueEth" want:"an amount of ETH above 0, e.g. 0.1"`
	ApprovalAboveEth            float64  `yaml:"approvalAboveEth" want:"an amount of ETH from 0 to maxValueEth, e.g. 0.01"`
	MaxFeeEth                   float64  `yaml:"maxFeeEth" want:"an amount of ETH above 0, e.g. 0.01"`
	PerHour                     int64    `yaml:"perHour" want:"a whole number of signatures from 1 to 10000"`
	PerDay                      int64    `yaml:"perDay" want:"a whole number of signatures from perHour to 100000"`
	PendingPerRequester         int64    `yaml:"pendingPerRequester" want:"a whole number of asks from 1 to 10000"`
	Recipients                  []string `yaml:"recipients" want:"a list of EVM addresses value and tokens may be sent to" elem:"an EVM address (0x and 40 hex digits)"`
	Contracts                   []string `yaml:"contracts" want:"a list of EVM addresses of contracts calls may go to" elem:"an EVM address (0x and 40 hex digits)"`
	Selectors                   []string `yaml:"selectors" want:"a list of method selectors, e.g. [\"0xa9059cbb\"]" elem:"a method selector (0x and 8 hex digits)"`
	MessageDomains              []string `yaml:"messageDomains" want:"a list of host names, e.g. [app.example.com]" elem:"a host name such as app.example.com"`
	RequireHumanConfirmation    bool     `yaml:"requireHumanConfirmation"`
	LegacyTransactions          bool     `yaml:"legacyTransactions"`
	UnsafeAllowContractCreation bool     `yaml:"unsafeAllowContractCreation"`

	// wei holds the ETH amounts converted exactly from the numbers as
	// written; set by check and failClosed, nil in the defaults (then the
	// amounts are converted from the float64 fields). It has no yaml key,
	// so the strict decoder, Get and List never see it.
	wei signingWei
}

// signingWei is the exact value in wei of each ETH amount of signingFile;
// a nil field means "convert the float64".
type signingWei struct{ maxValue, approvalAbove, maxFee *big.Int }

// Signing is the transaction signer's part of the policy (the signing
// section): which key signs, how it is unlocked, and what may be signed
// without a human. The zero value signs nothing: it allows no chain, and its
// nil amounts must be read as 0 (no value, no fee). Build one with Load,
// Parse or Default. An invalid signing section falls back to the defaults,
// keeping every limit the file makes stricter.
type Signing struct {
	// Keystore is the directory of the encrypted keys, as written ("~" not
	// expanded); "" means $WARDEN_HOME/keys.
	Keystore string
	// Address is the signing key's lower-cased 0x address; "" means the
	// only key in the keystore.
	Address string
	// PassphraseFile is the file holding the passphrase that unlocks the key
	// when the daemon starts, as written ("~" not expanded); "" for none.
	PassphraseFile string
	// PassphraseEnv names the environment variable holding the passphrase;
	// "" for none. It is never the passphrase itself, and at most one of
	// PassphraseFile and PassphraseEnv is set; with neither, `warden serve`
	// prompts on its terminal.
	PassphraseEnv string
	// ChainIDs are the chains transactions may be signed for, each above 0;
	// never nil. It is never empty when the section is valid; an invalid
	// section whose chainIds share none with the defaults leaves it empty,
	// and then no transaction is signed.
	ChainIDs []int64
	// MaxValue is the most native value, in wei, one transaction may send
	// (inclusive); above 0 once loaded, never nil.
	MaxValue *big.Int
	// ApprovalAbove is the native value, in wei, above which a human must
	// approve; 0 <= ApprovalAbove <= MaxValue once loaded, never nil.
	ApprovalAbove *big.Int
	// MaxFee is the most gas × maxFeePerGas, in wei, one transaction may
	// pay; above 0 once loaded, never nil.
	MaxFee *big.Int
	// PerHour and PerDay are the most signatures in a rolling hour and a
	// rolling 24 hours; 1 <= PerHour <= PerDay once loaded. Zero means none.
	PerHour, PerDay int
	// PendingPerRequester is how many signing asks one requester (requested_by
	// and session) may have waiting for a human at once, each holding a rate
	// slot; at least 1 once loaded. Zero means the signing policy's default.
	PendingPerRequester int
	// Recipients are the lower-cased 0x addresses value and tokens may be
	// sent to without asking; a transfer to any other asks. Never nil.
	Recipients []string
	// Contracts are the lower-cased 0x addresses of the contracts calls may
	// go to and approvals may name as spender; calls to others are denied
	// (the canonical tokens of warden's registry are always callable for
	// transfer and approve). Never nil.
	Contracts []string
	// Selectors are the method selectors calls may use, lower-cased "0x"
	// and 8 hex digits. Never nil.
	Selectors []string
	// MessageDomains are the lower-cased host names personal_sign may sign a
	// Sign-In with Ethereum message for; another readable message asks.
	// Never nil.
	MessageDomains []string
	// RequireHuman makes every signing request ask a human.
	RequireHuman bool
	// Legacy also signs legacy (type 0, EIP-155) transactions.
	Legacy bool
	// UnsafeContractCreation allows transactions with no recipient, which
	// deploy a contract.
	UnsafeContractCreation bool
}

// permit2 is the canonical Permit2 contract, lower-cased: the one contract
// the default signing.contracts allows.
const permit2 = "0x000000000022d473030f116ddee9f6b43ac78ba3"

// Method selectors of ERC-20 transfer(address,uint256) and
// approve(address,uint256), which the default signing.selectors allows.
const (
	selectorTransfer = "0xa9059cbb"
	selectorApprove  = "0x095ea7b3"
)

// ethDecimals is the decimals of ETH: one ETH is 10^18 wei.
const ethDecimals = 18

// The ETH amounts are bounded far above the ETH in existence, which keeps
// their whole part exact in a float64.
var (
	maxValueBounds      = bounds[float64]{lo: 0, hi: 1e9, loOpen: true, want: "an amount of ETH above 0 and at most 1000000000, with at most 18 decimals, e.g. 0.1"}
	approvalAboveBounds = bounds[float64]{lo: 0, hi: 1e9, want: "an amount of ETH from 0 to maxValueEth, with at most 18 decimals, e.g. 0.01"}
	maxFeeBounds        = bounds[float64]{lo: 0, hi: 1e9, loOpen: true, want: "an amount of ETH above 0 and at most 1000000000, with at most 18 decimals, e.g. 0.01"}
	perHourBounds       = bounds[int64]{lo: 1, hi: 10_000, want: "a whole number of signatures from 1 to 10000"}
	perDayBounds        = bounds[int64]{lo: 1, hi: 100_000, want: "a whole number of signatures from perHour to 100000"}
	pendingBounds       = bounds[int64]{lo: 1, hi: 10_000, want: "a whole number of asks from 1 to 10000"}
)

var signingSection = &sectionDef[signingFile]{
	key:        "signing",
	defaultsOf: signingDefaults,
	check:      checkSigning,
	toRuntime:  signingToRuntime,
	failClosed: signingFailClosed,
}

func signingDefaults() *signingFile {
	return &signingFile{
		ChainIDs:            []int64{1, 8453, 42161, 10},
		MaxValueEth:         0.1,
		ApprovalAboveEth:    0.01,
		MaxFeeEth:           0.01,
		PerHour:             10,
		PerDay:              50,
		PendingPerRequester: 3,
		Recipients:          []string{},
		Contracts:           []string{permit2},
		Selectors:           []string{selectorTransfer, selectorApprove},
		MessageDomains:      []string{},
	}
}

func checkSigning(f *signingFile, c *checker) {
	if f.Keystore != "" {
		if why := badHomePath(f.Keystore); why != "" {
			c.reportf([]any{"keystore"}, "keystore %s %s; want a directory path such as ~/.warden-keys (\"\" for $WARDEN_HOME/keys)", quote(f.Keystore), why)
		}
	}
	if f.Address != "" {
		f.Address = c.checkEVMAddress(f.Address, "signing key address", "address")
	}
	// Neither passphrase key is quoted back: if the passphrase itself was
	// written there, it must not reach logs and the audit trail too.
	if f.PassphraseFile != "" {
		if why := badHomePath(f.PassphraseFile); why != "" {
			c.reportf([]any{"passphraseFile"}, "passphraseFile %s; want the path of a file holding the passphrase, absolute or starting with ~/. "+
				"The passphrase itself never goes in this file: if that was the passphrase, remove it and change it", why)
		}
	}
	if f.PassphraseEnv != "" && !upperEnvName(f.PassphraseEnv) {
		c.reportf([]any{"passphraseEnv"}, "passphraseEnv is not an environment variable name (upper-case letters, digits and _, e.g. WARDEN_SIGNER_PASSPHRASE); "+
			"the passphrase itself never goes in this file: if that was the passphrase, remove it and change it")
	}
	if f.PassphraseFile != "" && f.PassphraseEnv != "" {
		c.reportf([]any{"passphraseEnv"}, "passphraseFile and passphraseEnv are both set; want one of them, or neither to be asked on the terminal when warden serve starts")
	}
	if len(f.ChainIDs) == 0 {
		c.reportf([]any{"chainIds"}, "chainIds is empty; want at least one chain id, e.g. [1] for Ethereum")
	}
	for i, id := range f.ChainIDs {
		if id <= 0 {
			c.reportf([]any{"chainIds", i}, "%d is not a chain id; want a whole number above 0, e.g. 1 for Ethereum", id)
		}
	}
	f.wei.maxValue = c.checkEth(f.MaxValueEth, maxValueBounds, "maxValueEth")
	f.wei.approvalAbove = c.checkEth(f.ApprovalAboveEth, approvalAboveBounds, "approvalAboveEth")
	f.wei.maxFee = c.checkEth(f.MaxFeeEth, maxFeeBounds, "maxFeeEth")
	if f.wei.maxValue != nil && f.wei.approvalAbove != nil && f.wei.approvalAbove.Cmp(f.wei.maxValue) > 0 {
		// Report it at the key the file sets, approvalAboveEth if both.
		maxValue := ethText(mappingValue(c.node, "maxValueEth"), f.MaxValueEth)
		approvalAbove := ethText(mappingValue(c.node, "approvalAboveEth"), f.ApprovalAboveEth)
		if mappingValue(c.node, "approvalAboveEth") != nil {
			c.reportf([]any{"approvalAboveEth"}, "%s is above maxValueEth (%s); want an amount of ETH at most maxValueEth", approvalAbove, maxValue)
		} else {
			c.reportf([]any{"maxValueEth"}, "%s is below approvalAboveEth (%s); want an amount of ETH at least approvalAboveEth", maxValue, approvalAbove)
		}
	}
	perHourBounds.check(c, f.PerHour, "perHour")
	perDayBounds.check(c, f.PerDay, "perDay")
	pendingBounds.check(c, f.PendingPerRequester, "pendingPerRequester")
	if perHourBounds.contains(f.PerHour) && perDayBounds.contains(f.PerDay) && f.PerDay < f.PerHour {
		if mappingValue(c.node, "perDay") != nil {
			c.reportf([]any{"perDay"}, "%d is below perHour (%d); want a whole number of signatures from perHour to 100000", f.PerDay, f.PerHour)
		} else {
			c.reportf([]any{"perHour"}, "%d is above perDay (%d); want a whole number of signatures from 1 to perDay", f.PerHour, f.PerDay)
		}
	}
	for i, r := range f.Recipients {
		f.Recipients[i] = c.checkEVMAddress(r, "recipient address", "recipients", i)
	}
	for i, a := range f.Contracts {
		f.Contracts[i] = c.checkEVMAddress(a, "contract address", "contracts", i)
	}
	for i, s := range f.Selectors {
		f.Selectors[i] = strings.ToLower(s)
		if !isSelector(s) {
			c.reportf([]any{"selectors", i}, "%s is not a method selector; want 0x and 8 hex digits, e.g. \"0xa9059cbb\" for transfer", quote(s))
		}
	}
	for i, d := range f.MessageDomains {
		f.MessageDomains[i] = strings.ToLower(d)
		if why := badHostName(d); why != "" {
			c.reportf([]any{"messageDomains", i}, "%s %s; want a host name such as app.example.com, without scheme, port or path", quote(d), why)
		}
	}
}

const wantEVMAddress = "an EVM address (0x and 40 hex digits)"

// checkEVMAddress records a problem at path unless s is an EVM address other
// than the zero address, and returns it lower-cased.
func (c *checker) checkEVMAddress(s, what string, path ...any) string {
	switch {
	case s == "":
		c.reportf(path, "empty %s; want %s", what, wantEVMAddress)
	case !isEVMAddress(s):
		c.reportf(path, "%s is not %s", quote(s), wantEVMAddress)
	case isZeroAddress(s):
		c.reportf(path, "%s is the zero address, which no key controls and which burns what is sent; want a real %s", quote(s), what)
	}
	return strings.ToLower(s)
}

// isSelector reports whether s is 0x followed by exactly 8 hex digits.
func isSelector(s string) bool {
	if len(s) != 10 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	return !strings.ContainsFunc(s[2:], func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')
	})
}

// badHomePath says what is wrong with a path that must be absolute or start
// with ~/, or "".
func badHomePath(s string) string {
	switch {
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "has a control character"
	case !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/"):
		return "is not an absolute path and does not start with ~/"
	}
	return ""
}

// badHostName says what is wrong with a DNS host name, or "". Letter case is
// ignored.
func badHostName(s string) string {
	switch {
	case s == "":
		return "is empty"
	case strings.Contains(s, "://"):
		return "has a scheme"
	case len(s) > 253:
		return "is longer than 253 characters"
	}
	for _, label := range strings.Split(s, ".") {
		switch {
		case label == "":
			return "has an empty label (two dots, or a dot at an end)"
		case len(label) > 63:
			return "has a label longer than 63 characters"
		case label[0] == '-' || label[len(label)-1] == '-':
			return "has a label starting or ending with -"
		case strings.ContainsFunc(label, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
		}):
			return "is not a host name (letters, digits, - and dots)"
		}
	}
	return ""
}

// checkEth checks the ETH amount v at key against b and converts it to wei
// exactly, from the number as written in the file where there is one. It
// returns nil after recording a problem.
func (c *checker) checkEth(v float64, b bounds[float64], key string) *big.Int {
	if !b.contains(v) {
		b.check(c, v, key)
		return nil
	}
	wei, exact := ethToWei(mappingValue(c.node, key), v)
	if !exact {
		c.reportf([]any{key}, "%s has more than 18 decimals, so it is not a whole number of wei; want %s", ethText(mappingValue(c.node, key), v), b.want)
		return nil
	}
	return wei
}

// ethToWei converts the ETH amount v, which the file wrote as n (nil when
// the file does not set it), to wei. A float is converted from its text in
// the file, so that digits a float64 cannot hold are kept; an integer, and
// an amount the file does not set, from v's shortest decimal form. exact is
// false when the amount has more than 18 decimals.
func ethToWei(n *yaml.Node, v float64) (wei *big.Int, exact bool) {
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		if wei, ok, exact := weiFromDecimal(n.Value); ok {
			return wei, exact
		}
	}
	wei, ok, exact := weiFromDecimal(strconv.FormatFloat(v, 'f', -1, 64))
	return wei, ok && exact
}

// ethText shows an ETH amount as the file writes it, for a message.
func ethText(n *yaml.Node, v float64) string {
	if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		return clip.String(n.Value, maxShown)
	}
	return formatFloat(v)
}

// weiFromDecimal converts a decimal number of ETH — digits with at most one
// point and an optional exponent, as YAML writes a float — to wei exactly.
// ok is false when s is not such a number, or is negative and not 0; exact
// is false when s has more than 18 decimals, so is not a whole number of wei.
func weiFromDecimal(s string) (wei *big.Int, ok, exact bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, false, false
		}
		// Beyond ±100000 every exponent gives the same answer below, and
		// this keeps the arithmetic small.
		mant, exp = s[:i], max(-100_000, min(e, 100_000))
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if digits == "" || strings.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
		return nil, false, false
	}
	// The amount is digits × 10^-scale.
	scale := len(frac) - exp
	digits = strings.TrimLeft(digits, "0")
	for scale > 0 && strings.HasSuffix(digits, "0") {
		digits, scale = digits[:len(digits)-1], scale-1
	}
	if digits == "" {
		return new(big.Int), true, true
	}
	if neg {
		return nil, false, false
	}
	if scale > ethDecimals {
		return nil, true, false
	}
	shift := ethDecimals - scale
	if len(digits)+shift > 100 {
		return nil, false, false // far beyond any amount of ETH, or of wei in a uint256
	}
	wei, _ = new(big.Int).SetString(digits, 10)
	return wei.Mul(wei, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil)), true, true
}

// weiOf returns a fresh copy of the exact amount in wei, or converts v when
// there is none. An amount that somehow fails to convert becomes 0, the
// strictest limit: failing closed.
func weiOf(exact *big.Int, v float64) *big.Int {
	wei := exact
	if wei == nil {
		if w, ok := ethToWei(nil, v); ok {
			wei = w
		}
	}
	if wei == nil || wei.Sign() <= 0 {
		return new(big.Int)
	}
	return new(big.Int).Set(wei)
}

// signingFailClosed makes an invalid section sign no more than the defaults
// allow, and less where the file says so: every limit the file sets stricter
// than its default is kept (lower amounts and rates, fewer chains,
// contracts and selectors), a requireHumanConfirmation the file turns on
// stays on, and the key the file names keeps signing, never another. The
// unsafe switches and legacyTransactions stay off, and recipients and
// messageDomains are empty.
func signingFailClosed(raw []*yaml.Node, f *signingFile) string {
	var kept []string
	keep := func(key string, changed bool) {
		if changed && !slices.Contains(kept, key) {
			kept = append(kept, key)
		}
	}
	f.wei = signingWei{maxValue: weiOf(nil, f.MaxValueEth), approvalAbove: weiOf(nil, f.ApprovalAboveEth), maxFee: weiOf(nil, f.MaxFeeEth)}
	for _, a := range []struct {
		key string
		v   *float64
		wei **big.Int
		b   bounds[float64]
	}{
		{"maxValueEth", &f.MaxValueEth, &f.wei.maxValue, maxValueBounds},
		{"approvalAboveEth", &f.ApprovalAboveEth, &f.wei.approvalAbove, approvalAboveBounds},
		{"maxFeeEth", &f.MaxFeeEth, &f.wei.maxFee, maxFeeBounds},
	} {
		for _, n := range rawValues(raw, a.key) {
			if n.Kind != yaml.ScalarNode {
				continue
			}
			v, ok := yamlFloat(n.ShortTag(), n.Value)
			if !ok || !a.b.contains(v) {
				continue
			}
			if wei, exact := ethToWei(n, v); exact && wei.Cmp(*a.wei) < 0 {
				*a.v, *a.wei = v, wei
				keep(a.key, true)
			}
		}
	}
	if f.wei.approvalAbove.Cmp(f.wei.maxValue) > 0 {
		// A lower maxValueEth kept: approval must start at it at the latest.
		f.ApprovalAboveEth, f.wei.approvalAbove = f.MaxValueEth, new(big.Int).Set(f.wei.maxValue)
	}
	for _, r := range []struct {
		key string
		v   *int64
		b   bounds[int64]
	}{{"perHour", &f.PerHour, perHourBounds}, {"perDay", &f.PerDay, perDayBounds}, {"pendingPerRequester", &f.PendingPerRequester, pendingBounds}} {
		for _, n := range rawValues(raw, r.key) {
			if i, ok := yamlInt(n.ShortTag(), n.Value); ok && n.Kind == yaml.ScalarNode && r.b.contains(i) && i < *r.v {
				*r.v = i
				keep(r.key, true)
			}
		}
	}
	f.PerHour = min(f.PerHour, f.PerDay)

	lower := func(n *yaml.Node) (string, bool) { return strings.ToLower(n.Value), true }
	var changed bool
	f.Contracts, changed = narrowList(raw, "contracts", f.Contracts, lower)
	keep("contracts", changed)
	f.Selectors, changed = narrowList(raw, "selectors", f.Selectors, lower)
	keep("selectors", changed)
	ids := make([]string, len(f.ChainIDs))
	for i, id := range f.ChainIDs {
		ids[i] = strconv.FormatInt(id, 10)
	}
	ids, changed = narrowList(raw, "chainIds", ids, func(n *yaml.Node) (string, bool) {
		i, ok := yamlInt(n.ShortTag(), n.Value)
		return strconv.FormatInt(i, 10), ok
	})
	keep("chainIds", changed)
	f.ChainIDs = make([]int64, len(ids))
	for i, id := range ids {
		f.ChainIDs[i], _ = strconv.ParseInt(id, 10, 64)
	}

	known := fieldNames(reflect.TypeFor[signingFile]())
	for _, n := range raw {
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && v.Kind == yaml.ScalarNode && readsTrue(v.Value) &&
				(k.Value == "requireHumanConfirmation" || suggest(k.Value, known) == "requireHumanConfirmation") {
				f.RequireHumanConfirmation = true
			}
		}
	}
	keep("requireHumanConfirmation", f.RequireHumanConfirmation)

	// The key that signs never changes: a valid address and keystore the
	// file gives (the same in every copy of the section) are kept.
	if a, ok := onlyValue(raw, "address", func(s string) bool { return isEVMAddress(s) && !isZeroAddress(s) }); ok {
		f.Address = strings.ToLower(a)
		keep("address", true)
	}
	if k, ok := onlyValue(raw, "keystore", func(s string) bool { return badHomePath(s) == "" }); ok {
		f.Keystore = k
		keep("keystore", true)
	}

	note := "until it is fixed no unsafe switch or legacy signing applies, no recipient or sign-in domain is allow-listed, " +
		"and no contract, selector or chain beyond the defaults is allowed"
	if len(kept) > 0 {
		note += "; kept from the file: " + strings.Join(kept, ", ")
	}
	return note
}

// rawValues returns every value the raw section (each copy of it, when
// duplicated) gives key.
func rawValues(raw []*yaml.Node, key string) []*yaml.Node {
	var out []*yaml.Node
	for _, n := range raw {
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
				out = append(out, n.Content[i+1])
			}
		}
	}
	return out
}

// narrowList keeps the items of def that every list the raw section gives
// key also names, as norm reads its scalars (a lone scalar counts as a list
// of one; anything else as an empty list). It reports whether it dropped any.
func narrowList(raw []*yaml.Node, key string, def []string, norm func(*yaml.Node) (string, bool)) ([]string, bool) {
	out := slices.Clone(def)
	for _, n := range rawValues(raw, key) {
		items := []*yaml.Node{n}
		if n.Kind == yaml.SequenceNode {
			items = n.Content
		}
		var named []string
		for _, item := range items {
			if item.Kind != yaml.ScalarNode {
				continue
			}
			if s, ok := norm(item); ok {
				named = append(named, s)
			}
		}
		out = slices.DeleteFunc(out, func(s string) bool { return !slices.Contains(named, s) })
	}
	return out, len(out) < len(def)
}

// onlyValue returns the one value the raw section gives key, when every
// scalar it gives is that same valid value.
func onlyValue(raw []*yaml.Node, key string, valid func(string) bool) (string, bool) {
	var found string
	for _, n := range rawValues(raw, key) {
		if n.Kind != yaml.ScalarNode || n.Value == "" || !valid(n.Value) || (found != "" && !strings.EqualFold(found, n.Value)) {
			return "", false
		}
		found = n.Value
	}
	return found, found != ""
}

func signingToRuntime(f *signingFile, p *Policy) {
	s := Signing{
		Keystore:               f.Keystore,
		Address:                strings.ToLower(f.Address),
		PassphraseFile:         f.PassphraseFile,
		PassphraseEnv:          f.PassphraseEnv,
		ChainIDs:               slices.Clone(f.ChainIDs),
		MaxValue:               weiOf(f.wei.maxValue, f.MaxValueEth),
		ApprovalAbove:          weiOf(f.wei.approvalAbove, f.ApprovalAboveEth),
		MaxFee:                 weiOf(f.wei.maxFee, f.MaxFeeEth),
		PerHour:                int(f.PerHour),
		PerDay:                 int(f.PerDay),
		PendingPerRequester:    int(f.PendingPerRequester),
		Recipients:             lowerAll(f.Recipients),
		Contracts:              lowerAll(f.Contracts),
		Selectors:              lowerAll(f.Selectors),
		MessageDomains:         lowerAll(f.MessageDomains),
		RequireHuman:           f.RequireHumanConfirmation,
		Legacy:                 f.LegacyTransactions,
		UnsafeContractCreation: f.UnsafeAllowContractCreation,
	}
	if s.ChainIDs == nil {
		s.ChainIDs = []int64{}
	}
	p.Signing = s
}

// lowerAll returns a fresh, never nil, lower-cased copy of ss.
func lowerAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}
