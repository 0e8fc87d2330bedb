package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/signing"
)

// approvalDetails are the lines an approval's box shows besides its
// resource and reason: what a human needs to answer it. For a trade or a
// transfer, the amount in USD, the token, the chain and the recipient; for
// a transaction to sign, its value in ETH (and USD where known), where it
// goes and the token transfer or approval its calldata makes; for a file
// write, the size. Each line is "label: value"; values come from the
// request and are shown through oneLine by the caller.
func approvalDetails(r *warden.Request) []string {
	var out []string
	add := func(label, value string) {
		if value != "" {
			out = append(out, fmt.Sprintf("%-9s %s", label+":", value))
		}
	}
	str := func(key string) string {
		raw, ok := r.Params[key]
		if !ok {
			return ""
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return strings.TrimSpace(string(raw))
	}
	usd := ""
	if v := str(warden.ParamAmountUSD); v != "" {
		usd = "$" + v
	}
	switch r.Capability {
	case warden.CapTrade:
		add("amount", usd)
		add("token", r.Resource)
		if in := str("token_in"); in != "" {
			add("paying", in)
		}
		add("chain", str("chain"))
		add("recipient", firstOf(str("recipient"), str("to")))
		if lev := str("leverage"); lev != "" {
			add("leverage", lev+"x")
		}
	case warden.CapSign:
		out = append(out, signDetails(r, usd)...)
	case "filesystem":
		if b := str("bytes"); b != "" {
			if n, err := strconv.ParseInt(b, 10, 64); err == nil {
				add("size", byteSize(n))
			}
		}
	default:
		add("amount", usd)
		add("token", firstOf(str("token"), str("symbol")))
		add("chain", str("chain"))
		add("recipient", firstOf(str("recipient"), str("to")))
	}
	return out
}

// signDetails are a signing request's lines: the value in the chain's
// native coin (ETH) and USD, the destination and chain, and the decoded
// call with its amount in the token's units where warden's token registry
// lists the token (else in base units, saying so).
func signDetails(r *warden.Request, usd string) []string {
	s, err := signing.FromWarden(r)
	if err != nil || s.Tx == nil {
		if usd != "" {
			return []string{fmt.Sprintf("%-9s %s", "value:", usd)}
		}
		return nil
	}
	var out []string
	add := func(label, value string) { out = append(out, fmt.Sprintf("%-9s %s", label+":", value)) }
	res := finance.Resolver{Testnets: true}
	var (
		chain    finance.Chain
		chainErr = errors.New("no chain id")
	)
	if id := s.Tx.ChainID; id != nil && id.IsInt64() {
		chain, chainErr = res.Chain(id.String())
	}
	coin := "ETH"
	if native, ok := res.Native(chain); chainErr == nil && ok {
		coin = native.Symbol
	}
	value := ethAmount(s.Tx.Value) + " " + coin
	if usd != "" {
		value += " (" + usd + ")"
	}
	add("value", value)
	if s.Tx.To != nil {
		add("to", signing.Checksum(*s.Tx.To))
	} else {
		add("to", "contract creation")
	}
	if s.Tx.ChainID != nil {
		name := s.Tx.ChainID.String()
		if chainErr == nil {
			name = chain.Name + " (" + name + ")"
		}
		add("chain", name)
	}
	call, err := signing.DecodeCall(s.Tx.Data)
	switch {
	case err != nil:
		add("calls", "calldata that does not decode: "+err.Error())
	case call == nil:
	case call.Name == "":
		add("calls", "an unknown function "+signing.SelectorHex(call.Selector))
	default:
		var token *signing.Address
		switch {
		case call.Token != nil: // Permit2 approve names its token
			token = call.Token
		case s.Tx.To != nil:
			token = s.Tx.To
		}
		var listed *finance.Token
		if token != nil && chainErr == nil {
			if t, ok := res.Listed(chain, signing.Checksum(*token)); ok {
				listed = &t
			}
		}
		line := call.Name
		if call.Amount != nil {
			line += " of " + tokenAmount(call.Amount, listed)
		}
		if call.To != nil {
			line += " to " + signing.Checksum(*call.To)
		}
		if call.Spender != nil {
			line += ", spender " + signing.Checksum(*call.Spender)
		}
		if call.Operator != nil {
			line += fmt.Sprintf(", operator %s (approved %v)", signing.Checksum(*call.Operator), call.Approved)
		}
		if token != nil {
			line += " on token " + signing.Checksum(*token)
			if listed == nil {
				line += " (not in warden's token registry)"
			}
		}
		add("calls", line)
	}
	return out
}

// tokenAmount is amount base units for a person: in t's units with its
// symbol ("25 USDC (25000000 base units)"), "unlimited" for an infinite
// allowance, or in base units when t is nil (a token warden does not list,
// whose decimals it does not know).
func tokenAmount(amount *big.Int, t *finance.Token) string {
	switch {
	case signing.Unlimited(amount):
		if t != nil {
			return "an unlimited amount of " + t.Symbol
		}
		return "an unlimited amount"
	case t == nil:
		return amount.String() + " base units"
	}
	return units(amount, t.Decimals) + " " + t.Symbol + " (" + amount.String() + " base units)"
}

// units is amount base units of a token with decimals, as a decimal
// number without trailing zeros.
func units(amount *big.Int, decimals int) string {
	if amount.Sign() == 0 || decimals <= 0 {
		return amount.String()
	}
	r := new(big.Rat).SetFrac(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
	return strings.TrimRight(strings.TrimRight(r.FloatString(decimals), "0"), ".")
}

// ethAmount formats wei as ETH with up to 18 decimals.
func ethAmount(wei *big.Int) string {
	if wei == nil || wei.Sign() == 0 {
		return "0"
	}
	return units(wei, 18)
}

// byteSize is n bytes for a person: "812 bytes", "12.5 KB", "3.1 MB".
func byteSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB (%d bytes)", float64(n)/1024, n)
	default:
		return fmt.Sprintf("%.1f MB (%d bytes)", float64(n)/(1024*1024), n)
	}
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// maxDiffLines bounds the diff an approval's view shows.
const maxDiffLines = 200

// writeDiff is the change a file write or edit asks for, as lines a person
// reads: "- " for what an edit replaces, "+ " for what it writes; "" when
// the request carries no content (a host's payload: Claude Code's Write and
// Edit, Gemini CLI's write_file and replace, in tool_input or args). The
// caller shows it through terminalText.
func writeDiff(r *warden.Request) string {
	if r.Capability != "filesystem" || len(r.Raw) == 0 {
		return ""
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(r.Raw, &top) != nil {
		return ""
	}
	input := top
	for _, k := range []string{"tool_input", "toolInput", "args", "input"} {
		var in map[string]json.RawMessage
		if raw, ok := top[k]; ok && json.Unmarshal(raw, &in) == nil {
			input = in
			break
		}
	}
	text := func(key string) (string, bool) {
		var s string
		raw, ok := input[key]
		return s, ok && json.Unmarshal(raw, &s) == nil
	}
	var b strings.Builder
	n := 0
	emit := func(prefix, s string) {
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if n == maxDiffLines {
				b.WriteString("… (more lines not shown)\n")
				n++
			}
			if n > maxDiffLines {
				return
			}
			b.WriteString(prefix + l + "\n")
			n++
		}
	}
	if old, ok := text("old_string"); ok {
		if repl, ok := text("new_string"); ok {
			emit("- ", old)
			emit("+ ", repl)
			return b.String()
		}
	}
	if content, ok := text("content"); ok {
		emit("+ ", content)
		return b.String()
	}
	return ""
}
