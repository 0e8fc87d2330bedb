package signing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"

	"github.com/agentwarden/warden/internal/clip"
)

// TypedData is an EIP-712 payload as the agent sent it (eth_signTypedData_v4).
// The zero value has no primary type and is not a valid payload.
type TypedData struct {
	Domain      TypedDomain
	PrimaryType string
	// Types are the struct definitions by name; empty when the agent
	// omitted them.
	Types map[string][]TypedField
	// Message is the primary struct's fields, as JSON.
	Message map[string]json.RawMessage

	// raw is the payload as received (compact JSON), which Params gives
	// back.
	raw json.RawMessage
}

// TypedDomain is the EIP-712 domain. Zero fields were absent; a salt is
// checked but not kept.
type TypedDomain struct {
	Name, Version     string
	ChainID           *big.Int
	VerifyingContract *Address
}

// TypedField is one field of an EIP-712 struct type.
type TypedField struct{ Name, Type string }

// Permit is typed data that lets a spender move the signer's tokens without
// a transaction: a Permit2 PermitSingle or PermitBatch, or an EIP-2612
// permit. The zero value grants nothing.
type Permit struct {
	// Kind is PermitSingle, PermitBatch or PermitEIP2612.
	Kind    string
	Spender Address
	// Owner is the token holder an EIP-2612 permit names; nil for Permit2,
	// where the signer is the owner.
	Owner *Address
	// Tokens are what the spender may move; one for PermitSingle and
	// EIP-2612.
	Tokens []PermitToken
	// Deadline is when the signature stops being valid (sigDeadline,
	// deadline), unix seconds.
	Deadline *big.Int
}

// PermitToken is one token a permit grants. Expiration is when a Permit2
// allowance lapses (unix seconds); nil for EIP-2612, whose allowance does
// not lapse.
type PermitToken struct {
	Token      Address
	Amount     *big.Int
	Expiration *big.Int
}

// Permit kinds.
const (
	PermitSingle  = "permit2.single"
	PermitBatch   = "permit2.batch"
	PermitEIP2612 = "eip2612"
)

// Permit2Address is Uniswap's Permit2 contract, at the same address on
// every chain it is deployed to with CREATE2.
var Permit2Address = Address{0x00, 0x00, 0x00, 0x00, 0x00, 0x22, 0xd4, 0x73, 0x03, 0x0f, 0x11, 0x6d, 0xde, 0xe9, 0xf6, 0xb4, 0x3a, 0xc7, 0x8b, 0xa3}

const permit2Name = "Permit2"

// canonicalTypes are the struct definitions the permits are signed with. A
// payload that gives types must give these, field for field: the signature
// commits to the types, and a decoder reading fields by name must not be
// reading a different struct.
var canonicalTypes = map[string][]TypedField{
	"PermitDetails": {{"token", "address"}, {"amount", "uint160"}, {"expiration", "uint48"}, {"nonce", "uint48"}},
	"PermitSingle":  {{"details", "PermitDetails"}, {"spender", "address"}, {"sigDeadline", "uint256"}},
	"PermitBatch":   {{"details", "PermitDetails[]"}, {"spender", "address"}, {"sigDeadline", "uint256"}},
	"Permit":        {{"owner", "address"}, {"spender", "address"}, {"value", "uint256"}, {"nonce", "uint256"}, {"deadline", "uint256"}},
}

// parseTypedData reads eth_signTypedData_v4's payload: a JSON object, or a
// string holding one (as MetaMask takes it), of at most MaxTypedDataBytes.
func parseTypedData(raw json.RawMessage) (*TypedData, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 6*MaxTypedDataBytes { // the most a JSON string's escapes can add
		return nil, invalid("typedData is %d bytes; at most %d are accepted", len(raw), MaxTypedDataBytes)
	}
	if len(raw) > 0 && raw[0] == '"' {
		s, err := parseString(keyTypedData, raw)
		if err != nil {
			return nil, err
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) > MaxTypedDataBytes {
		return nil, invalid("typedData is %d bytes; at most %d are accepted", len(raw), MaxTypedDataBytes)
	}
	if err := checkJSON(keyTypedData, raw); err != nil {
		return nil, err
	}
	compact, err := compactJSON(keyTypedData, raw)
	if err != nil {
		return nil, err
	}
	o, err := decodeObject(keyTypedData, compact)
	if err != nil {
		return nil, err
	}
	if err := o.only("domain", "message", "primaryType", "types"); err != nil {
		return nil, err
	}
	td := &TypedData{raw: compact}
	if td.Domain, err = typedDomain(o); err != nil {
		return nil, err
	}
	if td.PrimaryType, err = o.str("primaryType", true); err != nil {
		return nil, err
	}
	if td.PrimaryType == "" {
		return nil, invalid("typedData.primaryType is empty")
	}
	msgRaw, ok := o.get("message")
	if !ok {
		return nil, invalid("typedData.message is missing")
	}
	msg, err := decodeObject(o.field("message"), msgRaw)
	if err != nil {
		return nil, err
	}
	td.Message = msg.m
	if td.Types, err = typedTypes(o); err != nil {
		return nil, err
	}
	if _, ok := td.Types[td.PrimaryType]; len(td.Types) > 0 && !ok {
		return nil, invalid("typedData.primaryType %q is not defined in typedData.types", clip.String(td.PrimaryType, 80))
	}
	return td, nil
}

// typedDomain reads typedData.domain (required).
func typedDomain(td object) (TypedDomain, error) {
	var d TypedDomain
	raw, ok := td.get("domain")
	if !ok {
		return d, invalid("typedData.domain is missing")
	}
	o, err := decodeObject(td.field("domain"), raw)
	if err != nil {
		return d, err
	}
	if err := o.only("chainId", "name", "salt", "verifyingContract", "version"); err != nil {
		return d, err
	}
	if d.Name, err = o.str("name", false); err != nil {
		return d, err
	}
	if d.Version, err = o.str("version", false); err != nil {
		return d, err
	}
	if d.ChainID, err = o.quantity("chainId", 256); err != nil {
		return d, err
	}
	if _, ok := o.get("verifyingContract"); ok {
		a, err := o.address("verifyingContract")
		if err != nil {
			return d, err
		}
		d.VerifyingContract = &a
	}
	if raw, ok := o.get("salt"); ok {
		salt, err := parseHexBytes(o.field("salt"), raw, 32)
		if err != nil {
			return d, err
		}
		if len(salt) != 32 {
			return d, invalid("typedData.domain.salt is %d bytes; a salt is 32", len(salt))
		}
	}
	return d, nil
}

// typedTypes reads typedData.types (optional): struct name → [{name, type}].
func typedTypes(td object) (map[string][]TypedField, error) {
	raw, ok := td.get("types")
	if !ok {
		return nil, nil
	}
	o, err := decodeObject(td.field("types"), raw)
	if err != nil {
		return nil, err
	}
	types := make(map[string][]TypedField, len(o.m))
	for _, name := range slices.Sorted(maps.Keys(o.m)) {
		items, err := o.array(name)
		if err != nil {
			return nil, err
		}
		if items == nil {
			return nil, invalid("%s must be a JSON array", o.field(name))
		}
		fields := make([]TypedField, len(items))
		for i, item := range items {
			f, err := decodeObject(fmt.Sprintf("%s[%d]", o.field(name), i), item)
			if err != nil {
				return nil, err
			}
			if err := f.only("name", "type"); err != nil {
				return nil, err
			}
			if fields[i].Name, err = f.str("name", true); err != nil {
				return nil, err
			}
			if fields[i].Type, err = f.str("type", true); err != nil {
				return nil, err
			}
		}
		types[name] = fields
	}
	return types, nil
}

// json is the payload as received, or, for a TypedData built in code, its
// fields encoded.
func (td *TypedData) json() json.RawMessage {
	if td.raw != nil {
		return td.raw
	}
	domain := map[string]any{}
	if td.Domain.Name != "" {
		domain["name"] = td.Domain.Name
	}
	if td.Domain.Version != "" {
		domain["version"] = td.Domain.Version
	}
	if td.Domain.ChainID != nil {
		domain["chainId"] = td.Domain.ChainID.String()
	}
	if td.Domain.VerifyingContract != nil {
		domain["verifyingContract"] = Checksum(*td.Domain.VerifyingContract)
	}
	m := map[string]any{"domain": domain, "primaryType": td.PrimaryType, "message": td.Message}
	if td.Message == nil {
		m["message"] = map[string]any{}
	}
	if len(td.Types) > 0 {
		types := map[string][]map[string]string{}
		for name, fields := range td.Types {
			list := make([]map[string]string, len(fields))
			for i, f := range fields {
				list[i] = map[string]string{"name": f.Name, "type": f.Type}
			}
			types[name] = list
		}
		m["types"] = types
	}
	return mustJSON(m)
}

// Permit decodes the typed data if it is a permit; nil, nil when it is not.
//
// A Permit2 permit has the domain name "Permit2", the verifying contract
// Permit2Address and the primary type PermitSingle or PermitBatch. An
// EIP-2612 permit has the primary type "Permit" with owner, spender, value,
// nonce and deadline; its token is the domain's verifying contract. Typed
// data that looks like a permit in part (Permit2's name at another address,
// the Permit2 contract with another primary type, a Permit2 primary type
// outside Permit2, a Permit without a verifying contract or with other
// fields, types that differ from the permit's) is an *warden.Error
// (EInvalid): the policy refuses it rather than guess what it grants.
func (td *TypedData) Permit() (*Permit, error) {
	if td == nil {
		return nil, nil
	}
	d := td.Domain
	named := d.Name == permit2Name
	atPermit2 := d.VerifyingContract != nil && *d.VerifyingContract == Permit2Address
	switch {
	case named && !atPermit2:
		return nil, invalid("typed data claims the domain Permit2 but its verifying contract is %s, not Permit2 at %s", contractOf(d), Checksum(Permit2Address))
	case atPermit2 && !named:
		return nil, invalid("typed data for the Permit2 contract names the domain %q, not Permit2", clip.String(d.Name, 80))
	case atPermit2 && td.PrimaryType != "PermitSingle" && td.PrimaryType != "PermitBatch":
		return nil, invalid("typed data for the Permit2 contract has the primary type %q; only PermitSingle and PermitBatch are decoded", clip.String(td.PrimaryType, 80))
	case !atPermit2 && (td.PrimaryType == "PermitSingle" || td.PrimaryType == "PermitBatch"):
		return nil, invalid("typed data has Permit2's primary type %s outside the Permit2 domain (%q at %s)", td.PrimaryType, clip.String(d.Name, 80), contractOf(d))
	case atPermit2:
		return td.permit2()
	case td.PrimaryType == "Permit":
		return td.eip2612()
	}
	return nil, nil
}

func contractOf(d TypedDomain) string {
	if d.VerifyingContract == nil {
		return "absent"
	}
	return Checksum(*d.VerifyingContract)
}

// checkTypes holds the payload's types, when given, to the canonical ones
// of the structs named.
func (td *TypedData) checkTypes(names ...string) error {
	if len(td.Types) == 0 {
		return nil
	}
	for _, name := range names {
		if !slices.Equal(td.Types[name], canonicalTypes[name]) {
			return invalid("typedData.types.%s is not the %s type permits are signed with", name, name).
				WithHint(fmt.Sprintf("want %v", canonicalTypes[name]))
		}
	}
	return nil
}

// permit2 decodes a Permit2 PermitSingle or PermitBatch.
func (td *TypedData) permit2() (*Permit, error) {
	batch := td.PrimaryType == "PermitBatch"
	if err := td.checkTypes(td.PrimaryType, "PermitDetails"); err != nil {
		return nil, err
	}
	m := object{path: "typedData.message", m: td.Message}
	if err := m.only("details", "sigDeadline", "spender"); err != nil {
		return nil, err
	}
	p := &Permit{Kind: PermitSingle}
	var err error
	if p.Spender, err = m.address("spender"); err != nil {
		return nil, err
	}
	if p.Deadline, err = m.required("sigDeadline", 256); err != nil {
		return nil, err
	}
	raw, ok := m.get("details")
	if !ok {
		return nil, invalid("typedData.message.details is missing")
	}
	if !batch {
		t, err := permitDetails(m.field("details"), raw)
		if err != nil {
			return nil, err
		}
		p.Tokens = []PermitToken{t}
		return p, nil
	}
	p.Kind = PermitBatch
	items, err := m.array("details")
	if err != nil {
		return nil, err
	}
	for i, item := range items {
		t, err := permitDetails(fmt.Sprintf("%s[%d]", m.field("details"), i), item)
		if err != nil {
			return nil, err
		}
		p.Tokens = append(p.Tokens, t)
	}
	return p, nil
}

// permitDetails decodes Permit2's PermitDetails {token, amount (uint160),
// expiration (uint48), nonce (uint48)}.
func permitDetails(path string, raw json.RawMessage) (PermitToken, error) {
	var t PermitToken
	o, err := decodeObject(path, raw)
	if err != nil {
		return t, err
	}
	if err := o.only("amount", "expiration", "nonce", "token"); err != nil {
		return t, err
	}
	if t.Token, err = o.address("token"); err != nil {
		return t, err
	}
	if t.Amount, err = o.required("amount", 160); err != nil {
		return t, err
	}
	if t.Expiration, err = o.required("expiration", 48); err != nil {
		return t, err
	}
	if _, err = o.required("nonce", 48); err != nil {
		return t, err
	}
	return t, nil
}

// eip2612 decodes an EIP-2612 Permit {owner, spender, value, nonce,
// deadline} for the token at the domain's verifying contract.
func (td *TypedData) eip2612() (*Permit, error) {
	if td.Domain.VerifyingContract == nil {
		return nil, invalid("an EIP-2612 Permit names no token: typedData.domain.verifyingContract is missing")
	}
	if err := td.checkTypes("Permit"); err != nil {
		return nil, err
	}
	m := object{path: "typedData.message", m: td.Message}
	if err := m.only("deadline", "nonce", "owner", "spender", "value"); err != nil {
		return nil, err
	}
	p := &Permit{Kind: PermitEIP2612}
	owner, err := m.address("owner")
	if err != nil {
		return nil, err
	}
	p.Owner = &owner
	if p.Spender, err = m.address("spender"); err != nil {
		return nil, err
	}
	value, err := m.required("value", 256)
	if err != nil {
		return nil, err
	}
	if _, err := m.required("nonce", 256); err != nil {
		return nil, err
	}
	if p.Deadline, err = m.required("deadline", 256); err != nil {
		return nil, err
	}
	p.Tokens = []PermitToken{{Token: *td.Domain.VerifyingContract, Amount: value}}
	return p, nil
}
