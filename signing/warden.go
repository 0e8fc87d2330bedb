package signing

import (
	"fmt"
	"math/big"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Tools names of signing requests, for tiers and the audit log.
const (
	ToolSignTransaction = "sign_transaction"
	ToolSignMessage     = "sign_message"
)

// FromWarden parses the signing request a warden.Request carries: its Action
// is the method and its Params the method's params. The error is the same as
// ParseParams's; a request of another capability is EInvalid.
func FromWarden(req *warden.Request) (*Request, error) {
	if req.Capability != warden.CapSign {
		return nil, warden.Errorf(warden.EInvalid, "a %s request is not a signing request", req.Capability)
	}
	return ParseParams(req.Action, req.Params)
}

// Warden is the request as the gate decides it: capability sign, the method
// as its action, a one-line resource naming what would be signed, and the
// params in canonical form. The caller adds amount_usd where it knows the
// USD value.
func (r *Request) Warden() *warden.Request {
	tool := ToolSignMessage
	if r.Method == MethodSignTransaction {
		tool = ToolSignTransaction
	}
	return &warden.Request{Capability: warden.CapSign, Action: r.Method, Tool: tool, Resource: r.Summary(), Params: r.Params()}
}

// Summary is a one-line description of what would be signed, for channels
// and the audit log.
func (r *Request) Summary() string {
	switch {
	case r.Tx != nil:
		to := "contract creation"
		if r.Tx.To != nil {
			to = "to " + Checksum(*r.Tx.To)
		}
		s := fmt.Sprintf("%s %s, value %s wei", TypeName(r.Tx.Type), to, orZero(r.Tx.Value))
		if len(r.Tx.Data) >= 4 {
			s += ", calls " + SelectorHex([4]byte(r.Tx.Data[:4]))
		}
		if r.Tx.ChainID != nil {
			s += ", chain " + r.Tx.ChainID.String()
		} else {
			s += ", no chain id"
		}
		return s
	case r.Method == MethodPersonalSign:
		if !Readable(r.Message) {
			return fmt.Sprintf("personal_sign of %d opaque bytes", len(r.Message))
		}
		return "personal_sign: " + clip.String(string(r.Message), 80)
	case r.TypedData != nil:
		return "typed data " + r.TypedData.PrimaryType
	case r.Method == MethodSign:
		return "eth_sign of a raw 32-byte hash"
	}
	return r.Method
}

func orZero(v *big.Int) string {
	if v == nil {
		return "0"
	}
	return v.String()
}
