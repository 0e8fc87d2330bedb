package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

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

// maxDiffFile bounds the file a diff reads from disk.
const maxDiffFile = 1 << 20

// writeDiff is the change a file write or edit asks for, for a person, or
// "" when the request carries no content (a host's payload: Claude Code's
// Write, Edit and MultiEdit, Gemini CLI's write_file and replace, in
// tool_input or args). Where the file can be read on this machine (a
// regular text file of at most 1 MB, or none yet), it is a unified diff of
// the file as it is now against the file the call would leave; else the
// text the call replaces ("- ") and writes ("+ "), saying why. The caller
// shows it through terminalText.
func writeDiff(r *warden.Request) string {
	w, ok := proposedWrite(r)
	if !ok {
		return ""
	}
	path := r.Resource
	if !filepath.IsAbs(path) && r.Cwd != "" {
		path = filepath.Join(r.Cwd, path)
	}
	now, err := readForDiff(path)
	var after string
	if err == nil {
		after, err = w.apply(now)
	}
	if err != nil {
		return "the change (" + err.Error() + "; the text it replaces and writes):\n" + clipLines(w.plain())
	}
	if now == after {
		return "the change: none (the file on this machine already reads so)\n"
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: diffLines(now), B: diffLines(after),
		FromFile: path + " (now)", ToFile: path + " (after the write)", Context: 3,
	})
	if err != nil {
		return "the change (" + err.Error() + "; the text it replaces and writes):\n" + clipLines(w.plain())
	}
	return "the change, against the file on this machine now:\n" + clipLines(diff)
}

// fileWrite is what a write or edit call asks for: the whole new content,
// or edits of the file's text.
type fileWrite struct {
	content *string
	edits   []textEdit
}

// textEdit replaces old by repl: the first time, or every time with all.
type textEdit struct {
	old, repl string
	all       bool
}

// proposedWrite reads the write a host's payload asks for; ok is false
// when it carries none.
func proposedWrite(r *warden.Request) (fileWrite, bool) {
	if r.Capability != "filesystem" || len(r.Raw) == 0 {
		return fileWrite{}, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(r.Raw, &top) != nil {
		return fileWrite{}, false
	}
	input := top
	for _, k := range []string{"tool_input", "toolInput", "args", "input"} {
		var in map[string]json.RawMessage
		if raw, ok := top[k]; ok && json.Unmarshal(raw, &in) == nil {
			input = in
			break
		}
	}
	var in struct {
		Content              *string `json:"content"`
		OldString            *string `json:"old_string"`
		NewString            *string `json:"new_string"`
		ReplaceAll           bool    `json:"replace_all"`
		ExpectedReplacements int     `json:"expected_replacements"`
		Edits                []struct {
			OldString  *string `json:"old_string"`
			NewString  *string `json:"new_string"`
			ReplaceAll bool    `json:"replace_all"`
		} `json:"edits"`
	}
	b, _ := json.Marshal(input)
	if json.Unmarshal(b, &in) != nil {
		return fileWrite{}, false
	}
	switch {
	case in.OldString != nil && in.NewString != nil:
		return fileWrite{edits: []textEdit{{*in.OldString, *in.NewString, in.ReplaceAll || in.ExpectedReplacements > 1}}}, true
	case len(in.Edits) > 0:
		var w fileWrite
		for _, e := range in.Edits {
			if e.OldString == nil || e.NewString == nil {
				return fileWrite{}, false
			}
			w.edits = append(w.edits, textEdit{*e.OldString, *e.NewString, e.ReplaceAll})
		}
		return w, true
	case in.Content != nil:
		return fileWrite{content: in.Content}, true
	}
	return fileWrite{}, false
}

// apply is the text the write leaves in a file that reads now; an error
// when an edit's text is not in it.
func (w fileWrite) apply(now string) (string, error) {
	if w.content != nil {
		return *w.content, nil
	}
	for _, e := range w.edits {
		if e.old == "" || !strings.Contains(now, e.old) {
			return "", errors.New("the text to replace is not in the file on this machine")
		}
		n := 1
		if e.all {
			n = -1
		}
		now = strings.Replace(now, e.old, e.repl, n)
	}
	return now, nil
}

// plain is the write as the text it replaces ("- ") and writes ("+ ").
func (w fileWrite) plain() string {
	var b strings.Builder
	emit := func(prefix, s string) {
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			b.WriteString(prefix + l + "\n")
		}
	}
	if w.content != nil {
		emit("+ ", *w.content)
	}
	for _, e := range w.edits {
		emit("- ", e.old)
		emit("+ ", e.repl)
	}
	return b.String()
}

// readForDiff reads the file a write would change, as text: "" for one
// that does not exist yet. It never blocks on a FIFO or a device (opened
// non-blocking, then only a regular file is read) and reads at most
// maxDiffFile bytes.
func readForDiff(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", errors.New("the file on this machine cannot be read")
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", errors.New("the file on this machine cannot be read")
	case !st.Mode().IsRegular():
		return "", errors.New("the path on this machine is not a regular file")
	case st.Size() > maxDiffFile:
		return "", errors.New("the file on this machine is larger than 1 MB")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	switch {
	case err != nil:
		return "", errors.New("the file on this machine cannot be read")
	case len(data) > maxDiffFile:
		return "", errors.New("the file on this machine is larger than 1 MB")
	case !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0:
		return "", errors.New("the file on this machine is not text")
	}
	return string(data), nil
}

// diffLines splits s into lines, each ending in a newline (difflib's
// SplitLines adds an empty line after a final newline, and makes an empty
// file one empty line).
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		return lines[:len(lines)-1]
	}
	lines[len(lines)-1] += "\n"
	return lines
}

// clipLines keeps the first maxDiffLines lines of s.
func clipLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= maxDiffLines {
		out := strings.Join(lines, "")
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		return out
	}
	return strings.Join(lines[:maxDiffLines], "") + "… (more lines not shown)\n"
}
