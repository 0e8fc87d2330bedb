package signing

import (
	"encoding/hex"
	"math/big"
	"strings"
	"testing"

	"golang.org/x/crypto/sha3"
)

// TestSelectors: every known selector is keccak256 of its signature, and
// the selectors the policy names are the expected ones.
func TestSelectors(t *testing.T) {
	want := map[string]string{
		CallTransfer: "0xa9059cbb", CallTransferFrom: "0x23b872dd", CallApprove: "0x095ea7b3",
		CallIncreaseAllowance: "0x39509351", CallSetApprovalForAll: "0xa22cb465", CallPermit: "0xd505accf",
		CallPermit2Approve: "0x87517c45",
	}
	if len(functions) != len(want) {
		t.Fatalf("%d functions, want %d", len(functions), len(want))
	}
	for sel, fn := range functions {
		t.Run(fn.name, func(t *testing.T) {
			h := sha3.NewLegacyKeccak256()
			h.Write([]byte(fn.sig))
			if got := SelectorHex([4]byte(h.Sum(nil))); got != SelectorHex(sel) || got != want[fn.name] {
				t.Errorf("keccak256(%q)[:4] = %s; table has %s, want %s", fn.sig, got, SelectorHex(sel), want[fn.name])
			}
		})
	}
}

// words builds calldata: a selector and 32-byte words, each given as hex
// left-padded with zeros.
func words(selector string, ws ...string) []byte {
	s := strings.TrimPrefix(selector, "0x")
	for _, w := range ws {
		s += strings.Repeat("0", 64-len(w)) + w
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// callCase is calldata and what DecodeCall makes of it: "error:
// <substring>", "nil", or the fields as callString gives them.
type callCase struct {
	name string
	data []byte
	want string
}

func callCases() []callCase {
	a, b := strings.ToLower(addrA[2:]), strings.ToLower(addrB[2:])
	max256 := strings.Repeat("f", 64)
	max160 := strings.Repeat("f", 40)
	return []callCase{
		{"empty is a value transfer", nil, "nil"},
		{"one byte", []byte{0xa9}, "error: calldata shorter than a 4-byte selector"},
		{"three bytes", []byte{0xa9, 0x05, 0x9c}, "error: calldata shorter than a 4-byte selector"},
		{"unknown selector", words("0xdeadbeef", "00"), "name= sel=0xdeadbeef"},
		{"unknown selector alone", words("0xdeadbeef"), "name= sel=0xdeadbeef"},
		{"unknown selector, any length", append(words("0xdeadbeef"), 1, 2, 3), "name= sel=0xdeadbeef"},
		{"transfer", words("a9059cbb", a, "2540be400"), "name=transfer sel=0xa9059cbb to=" + a + " amount=10000000000"},
		{"transfer selector alone", words("a9059cbb"), "error: is 4 bytes; want exactly 68"},
		{"transfer short", words("a9059cbb", a), "error: calldata for transfer(address,uint256) is 36 bytes; want exactly 68"},
		{"transfer trailing bytes", append(words("a9059cbb", a, "989680"), 0xab, 0xcd, 0xef), "error: is 71 bytes; want exactly 68"},
		{"transfer extra word", words("a9059cbb", a, "989680", "0"), "error: is 100 bytes; want exactly 68"},
		{"transfer dirty address", words("a9059cbb", strings.Repeat("f", 24)+a, "989680"), "error: to (word 1) is not an address: its upper 12 bytes are not zero"},
		{"transfer one dirty bit", words("a9059cbb", "1"+strings.Repeat("0", 23)+a, "989680"), "error: to (word 1) is not an address"},
		{"transfer max amount", words("a9059cbb", a, max256), "name=transfer sel=0xa9059cbb to=" + a + " amount=" + maxUint(256) + " unlimited"},
		{"transferFrom", words("23b872dd", b, a, "64"), "name=transferFrom sel=0x23b872dd to=" + a + " from=" + b + " amount=100"},
		{"transferFrom dirty from", words("23b872dd", "01"+strings.Repeat("0", 22)+b, a, "64"), "error: from (word 1)"},
		{"approve", words("095ea7b3", b, max256), "name=approve sel=0x095ea7b3 spender=" + b + " amount=" + maxUint(256) + " grants unlimited"},
		{"approve zero", words("095ea7b3", b, "0"), "name=approve sel=0x095ea7b3 spender=" + b + " amount=0 grants"},
		{"approve dirty spender", words("095ea7b3", "ff"+strings.Repeat("0", 22)+b, "1"), "error: spender (word 1)"},
		{"increaseAllowance", words("39509351", b, "1"), "name=increaseAllowance sel=0x39509351 spender=" + b + " amount=1 grants"},
		{"setApprovalForAll true", words("a22cb465", b, "1"), "name=setApprovalForAll sel=0xa22cb465 operator=" + b + " approved grants"},
		{"setApprovalForAll false", words("a22cb465", b, "0"), "name=setApprovalForAll sel=0xa22cb465 operator=" + b},
		{"setApprovalForAll bool 2", words("a22cb465", b, "2"), "error: approved (word 2) is 0x" + strings.Repeat("0", 63) + "2; a bool is 0 or 1"},
		{"setApprovalForAll bool high bit", words("a22cb465", b, "1"+strings.Repeat("0", 62)+"1"), "error: a bool is 0 or 1"},
		{"permit", words("d505accf", a, b, max256, "f4865700", "1b", strings.Repeat("ab", 32), strings.Repeat("cd", 32)),
			"name=permit sel=0xd505accf spender=" + b + " owner=" + a + " amount=" + maxUint(256) + " deadline=4102444800 grants unlimited"},
		{"permit dirty v", words("d505accf", a, b, "1", "1", "11b", "0", "0"), "error: v (word 5) has bits set above its uint8"},
		{"permit short", words("d505accf", a, b, "1", "1", "1b", "0"), "error: is 196 bytes; want exactly 228"},
		{"permit2 approve", words("87517c45", strings.ToLower(usdc[2:]), b, max160, "ffffffffffff"),
			"name=permit2.approve sel=0x87517c45 spender=" + b + " token=" + strings.ToLower(usdc[2:]) + " amount=" + maxUint(160) + " deadline=" + maxUint(48) + " grants unlimited"},
		{"permit2 approve amount over uint160", words("87517c45", a, b, "1"+max160, "0"), "error: amount (word 3) has bits set above its uint160"},
		{"permit2 approve expiration over uint48", words("87517c45", a, b, "1", "1000000000000"), "error: expiration (word 4) has bits set above its uint48"},
	}
}

func TestDecodeCall(t *testing.T) {
	for _, c := range callCases() {
		t.Run(c.name, func(t *testing.T) {
			call, err := DecodeCall(c.data)
			if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
				if err == nil {
					t.Fatalf("DecodeCall(%x) = %s; want an error", c.data, callString(call))
				}
				requireInvalid(t, err, want)
				return
			}
			if err != nil {
				t.Fatalf("DecodeCall(%x) = %v", c.data, err)
			}
			if got := callString(call); got != c.want {
				t.Errorf("DecodeCall(%x) = %s, want %s", c.data, got, c.want)
			}
		})
	}
}

// callString describes a decoded call, in one line, for comparisons.
func callString(c *Call) string {
	if c == nil {
		return "nil"
	}
	s := "name=" + c.Name + " sel=" + SelectorHex(c.Selector)
	for _, f := range []struct {
		k string
		v *Address
	}{{"to", c.To}, {"from", c.From}, {"spender", c.Spender}, {"operator", c.Operator}, {"owner", c.Owner}, {"token", c.Token}} {
		if f.v != nil {
			s += " " + f.k + "=" + f.v.Hex()[2:]
		}
	}
	if c.Amount != nil {
		s += " amount=" + c.Amount.String()
	}
	if c.Deadline != nil {
		s += " deadline=" + c.Deadline.String()
	}
	if c.Approved {
		s += " approved"
	}
	if c.Grants() {
		s += " grants"
	}
	if Unlimited(c.Amount) {
		s += " unlimited"
	}
	return s
}

func maxUint(bits uint) string {
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1)).String()
}

func TestUnlimited(t *testing.T) {
	two := func(e uint) *big.Int { return new(big.Int).Lsh(big.NewInt(1), e) }
	cases := []struct {
		name string
		n    *big.Int
		want bool
	}{
		{"nil", nil, false},
		{"zero", new(big.Int), false},
		{"a billion USDC", big.NewInt(1e15), false},
		{"2^128 - 1", new(big.Int).Sub(two(128), big.NewInt(1)), false},
		{"2^128", two(128), true},
		{"max uint160", new(big.Int).Sub(two(160), big.NewInt(1)), true},
		{"2^255", two(255), true},
		{"max uint256", new(big.Int).Sub(two(256), big.NewInt(1)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Unlimited(c.n); got != c.want {
				t.Errorf("Unlimited(%v) = %v, want %v", c.n, got, c.want)
			}
		})
	}
}

func TestGrants(t *testing.T) {
	cases := []struct {
		name string
		call *Call
		want bool
	}{
		{"nil", nil, false},
		{"unknown", &Call{}, false},
		{"transfer", &Call{Name: CallTransfer}, false},
		{"transferFrom", &Call{Name: CallTransferFrom}, false},
		{"approve", &Call{Name: CallApprove}, true},
		{"increaseAllowance", &Call{Name: CallIncreaseAllowance}, true},
		{"setApprovalForAll true", &Call{Name: CallSetApprovalForAll, Approved: true}, true},
		{"setApprovalForAll false", &Call{Name: CallSetApprovalForAll}, false},
		{"permit", &Call{Name: CallPermit}, true},
		{"permit2 approve", &Call{Name: CallPermit2Approve}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.call.Grants(); got != c.want {
				t.Errorf("%+v.Grants() = %v, want %v", c.call, got, c.want)
			}
		})
	}
}

func TestSelectorHex(t *testing.T) {
	if got := SelectorHex([4]byte{0xa9, 0x05, 0x9c, 0xbb}); got != "0xa9059cbb" {
		t.Errorf("SelectorHex = %s", got)
	}
	if got := SelectorHex([4]byte{}); got != "0x00000000" {
		t.Errorf("SelectorHex(zero) = %s", got)
	}
}
