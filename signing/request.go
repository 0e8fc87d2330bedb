package signing

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Methods an agent may name, with the JSON-RPC names wallets use.
const (
	MethodSignTransaction = "eth_signTransaction"
	MethodPersonalSign    = "personal_sign"
	MethodSignTypedData   = "eth_signTypedData_v4"
	// MethodSign is raw hash signing: it is parsed only so that the policy
	// can refuse it by name (a 32-byte hash can be a transaction's).
	MethodSign = "eth_sign"
)

// Size limits of a request's payloads. A larger payload is refused before it
// is read further.
const (
	MaxDataBytes      = 128 << 10 // tx.data, decoded
	MaxMessageBytes   = 16 << 10  // a personal_sign message, decoded
	MaxTypedDataBytes = 64 << 10  // the typed data's JSON
	maxBodyBytes      = 1 << 20   // a whole request body
	maxRequestID      = 128
	maxDepth          = 64 // JSON nesting
)

// Request keys.
const (
	keyMethod    = "method"
	keyRequestID = "requestId"
	keyTx        = "tx"
	keyMessage   = "message"
	keyTypedData = "typedData"
	keyHash      = "hash"
	keyDecoded   = "decoded"
)

// methodParam is the one payload key each method takes besides requestId.
var methodParam = map[string]string{
	MethodSignTransaction: keyTx,
	MethodPersonalSign:    keyMessage,
	MethodSignTypedData:   keyTypedData,
	MethodSign:            keyHash,
}

// ignoredParam marks the params the gate adds to a request after parsing
// (the USD value, the decoded calldata); a parser reading the stored request
// again skips them.
var ignoredParam = map[string]bool{warden.ParamAmountUSD: true, keyDecoded: true}

// Request is what a sandboxed agent asks warden to sign, parsed strictly:
// exactly one payload, set by Method. The zero value names no method and
// is not a valid request.
type Request struct {
	// Method is one of the Method constants.
	Method string
	// RequestID is the agent's id for the request, for replay protection;
	// "" when it gave none. It is 1–128 characters of [A-Za-z0-9._:-].
	RequestID string
	// Tx is the transaction of an eth_signTransaction.
	Tx *Tx
	// From is the sender the transaction names (tx.from); nil when it named
	// none. The service refuses a From that is not its own address.
	From *Address
	// Message is the bytes a personal_sign signs (before the EIP-191
	// prefix). MessageHex is true when the agent gave them as 0x-hex rather
	// than as text.
	Message    []byte
	MessageHex bool
	// TypedData is the EIP-712 payload of an eth_signTypedData_v4.
	TypedData *TypedData
	// Hash is the 32-byte hash of an eth_sign.
	Hash []byte

	// accessList is the transaction's non-empty access list as received
	// (compact JSON), kept so that Params can give it back.
	accessList json.RawMessage
}

// ParseBody reads a request body: a JSON object with "method" and that
// method's params (see ParseParams). The error is an *warden.Error
// (EInvalid) saying what is wrong: the body is not one JSON object, holds a
// key twice, names no or an unknown method, or a param is malformed.
func ParseBody(body []byte) (*Request, error) {
	if len(body) > maxBodyBytes {
		return nil, invalid("the request body is %d bytes; at most %d are accepted", len(body), maxBodyBytes)
	}
	top, err := decodeObject("the request body", body)
	if err != nil {
		return nil, err
	}
	raw, ok := top.get(keyMethod)
	if !ok {
		return nil, invalid("the request names no method").WithHint(methodsHint)
	}
	method, err := parseString(keyMethod, raw)
	if err != nil {
		return nil, err
	}
	delete(top.m, keyMethod)
	return ParseParams(method, top.m)
}

const methodsHint = `set "method" to eth_signTransaction, personal_sign or eth_signTypedData_v4`

// ParseParams reads the params of a request for method: "requestId"
// (optional) and the method's payload, "tx", "message", "typedData" or
// "hash". The params the gate adds ("amount_usd", "decoded") are skipped;
// any other key is an error naming it. Every error is an *warden.Error
// (EInvalid); the policy denies such a request rather than guess.
func ParseParams(method string, params map[string]json.RawMessage) (*Request, error) {
	key, ok := methodParam[method]
	if !ok {
		return nil, invalid("unknown signing method %q", clip.String(method, 80)).WithHint(methodsHint)
	}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if ignoredParam[k] {
			continue
		}
		if size += len(k) + len(params[k]); size > maxBodyBytes {
			return nil, invalid("the request's params are more than %d bytes", maxBodyBytes)
		}
		if k != keyRequestID && k != key {
			return nil, invalid("unknown key %q in a %s request", clip.String(k, 80), method).
				WithHint(`a ` + method + ` request takes "method", "requestId" and "` + key + `"`)
		}
		if err := checkJSON(k, params[k]); err != nil {
			return nil, err
		}
	}
	r := &Request{Method: method}
	if raw, ok := present(params[keyRequestID]); ok {
		id, err := parseString(keyRequestID, raw)
		if err != nil {
			return nil, err
		}
		if !validRequestID(id) {
			return nil, invalid("requestId %q is not 1 to %d characters of letters, digits and . _ : -", clip.String(id, 80), maxRequestID)
		}
		r.RequestID = id
	}
	raw, ok := present(params[key])
	if !ok {
		return nil, invalid("a %s request has no %q", method, key)
	}
	var err error
	switch method {
	case MethodSignTransaction:
		err = parseTx(r, raw)
	case MethodPersonalSign:
		r.Message, r.MessageHex, err = parseMessage(raw)
	case MethodSignTypedData:
		r.TypedData, err = parseTypedData(raw)
	case MethodSign:
		r.Hash, err = parseHash(raw)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	return !strings.ContainsFunc(id, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c))
	})
}

// parseHash reads an eth_sign hash: exactly 32 bytes of 0x-hex.
func parseHash(raw json.RawMessage) ([]byte, error) {
	h, err := parseHexBytes(keyHash, raw, 32)
	if err != nil {
		return nil, err
	}
	if len(h) != 32 {
		return nil, invalid("hash is %d bytes; eth_sign signs exactly 32", len(h))
	}
	return h, nil
}

// Transaction keys. blobKeys belong to type-3 transactions, which carry
// fields Tx does not hold; they are refused with a hint.
var (
	txKeys = []string{"type", "chainId", "nonce", "to", "from", "value", "data", "input", "gas", "gasLimit",
		"maxFeePerGas", "maxPriorityFeePerGas", "gasPrice", "accessList", "authorizationList"}
	blobKeys = []string{"maxFeePerBlobGas", "blobVersionedHashes", "blobs", "sidecars"}
)

// parseTx reads an eth_signTransaction's tx into r.Tx (and r.From).
func parseTx(r *Request, raw []byte) error {
	o, err := decodeObject(keyTx, raw)
	if err != nil {
		return err
	}
	if k := o.unknown(txKeys...); k != "" {
		e := invalid("unknown key %q in tx", clip.String(k, 80))
		if slices.Contains(blobKeys, k) {
			return e.WithHint("blob transactions (EIP-4844, type 3) are not signed")
		}
		return e.WithHint("tx takes " + strings.Join(txKeys, ", "))
	}
	tx := &Tx{Type: TypeDynamicFee}
	if typ, err := o.quantity("type", 64); err != nil {
		return err
	} else if typ != nil {
		if !typ.IsInt64() || typ.Int64() > maxKnownTxType {
			return invalid("tx.type %s is not a transaction type warden knows (0 to %d)", typ, maxKnownTxType)
		}
		tx.Type = int(typ.Int64())
	}
	if tx.ChainID, err = o.quantity("chainId", 256); err != nil {
		return err
	}
	nonce, err := o.required("nonce", 64)
	if err != nil {
		return err
	}
	tx.Nonce = nonce.Uint64()
	if to, ok := o.get("to"); ok && string(to) != `""` {
		a, err := parseAddressField("tx.to", to)
		if err != nil {
			return err
		}
		tx.To = &a
	}
	if _, ok := o.get("from"); ok {
		a, err := o.address("from")
		if err != nil {
			return err
		}
		r.From = &a
	}
	if tx.Value, err = o.quantity("value", 256); err != nil {
		return err
	}
	if tx.Value == nil {
		tx.Value = new(big.Int)
	}
	if tx.Data, err = txData(o); err != nil {
		return err
	}
	if tx.Gas, err = txGas(o); err != nil {
		return err
	}
	if err := txFees(o, tx); err != nil {
		return err
	}
	if r.accessList, err = accessList(o); err != nil {
		return err
	}
	tx.AccessList = r.accessList != nil
	if tx.Authorizations, err = authorizations(o); err != nil {
		return err
	}
	r.Tx = tx
	return nil
}

// txData reads tx.data or its alias tx.input; both given must agree.
func txData(o object) ([]byte, error) {
	var data []byte
	seen := ""
	for _, k := range []string{"data", "input"} {
		raw, ok := o.get(k)
		if !ok {
			continue
		}
		b, err := parseHexBytes(o.field(k), raw, MaxDataBytes)
		if err != nil {
			return nil, err
		}
		if seen != "" && !bytes.Equal(b, data) {
			return nil, invalid("tx.data and tx.input differ").WithHint("give the calldata once, as tx.data")
		}
		data, seen = b, k
	}
	return data, nil
}

// txGas reads tx.gas or its alias tx.gasLimit; one is required, both given
// must agree.
func txGas(o object) (uint64, error) {
	var gas *big.Int
	for _, k := range []string{"gas", "gasLimit"} {
		g, err := o.quantity(k, 64)
		if err != nil {
			return 0, err
		}
		if g != nil && gas != nil && g.Cmp(gas) != 0 {
			return 0, invalid("tx.gas and tx.gasLimit differ").WithHint("give the gas limit once, as tx.gas")
		}
		if g != nil {
			gas = g
		}
	}
	if gas == nil {
		return 0, invalid("tx.gas is missing").WithHint("give the gas limit, e.g. \"gas\": \"21000\"")
	}
	return gas.Uint64(), nil
}

// txFees reads the fee fields, all of them whatever the type, and requires
// the ones the type is signed with: gasPrice for types 0 and 1, the
// EIP-1559 pair otherwise.
func txFees(o object, tx *Tx) error {
	var err error
	if tx.MaxFeePerGas, err = o.quantity("maxFeePerGas", 256); err != nil {
		return err
	}
	if tx.MaxPriorityFeePerGas, err = o.quantity("maxPriorityFeePerGas", 256); err != nil {
		return err
	}
	if tx.GasPrice, err = o.quantity("gasPrice", 256); err != nil {
		return err
	}
	need := map[string]*big.Int{"maxFeePerGas": tx.MaxFeePerGas, "maxPriorityFeePerGas": tx.MaxPriorityFeePerGas}
	if tx.Type == TypeLegacy || tx.Type == TypeAccessList {
		need = map[string]*big.Int{"gasPrice": tx.GasPrice}
	}
	for _, k := range slices.Sorted(maps.Keys(need)) {
		if need[k] == nil {
			return invalid("tx.%s is missing; a %s transaction needs it", k, TypeName(tx.Type))
		}
	}
	return nil
}

// accessList checks tx.accessList ([{address, storageKeys}]) and returns it
// as compact JSON; nil when absent or empty.
func accessList(o object) (json.RawMessage, error) {
	items, err := o.array("accessList")
	if err != nil || len(items) == 0 {
		return nil, err
	}
	for i, item := range items {
		e, err := decodeObject(fmt.Sprintf("tx.accessList[%d]", i), item)
		if err != nil {
			return nil, err
		}
		if err := e.only("address", "storageKeys"); err != nil {
			return nil, err
		}
		if _, err := e.address("address"); err != nil {
			return nil, err
		}
		keys, err := e.array("storageKeys")
		if err != nil {
			return nil, err
		}
		for j, k := range keys {
			b, err := parseHexBytes(fmt.Sprintf("%s[%d]", e.field("storageKeys"), j), k, 32)
			if err != nil {
				return nil, err
			}
			if len(b) != 32 {
				return nil, invalid("%s[%d] is %d bytes; a storage key is 32", e.field("storageKeys"), j, len(b))
			}
		}
	}
	raw, _ := o.get("accessList")
	return compactJSON(o.field("accessList"), raw)
}

// authorizations reads an EIP-7702 authorization list, to be refused by
// name. The signature fields of a signed tuple (yParity or v, r, s) are
// checked as quantities and dropped.
func authorizations(o object) ([]Authorization, error) {
	items, err := o.array("authorizationList")
	if err != nil || len(items) == 0 {
		return nil, err
	}
	list := make([]Authorization, 0, len(items))
	for i, item := range items {
		e, err := decodeObject(fmt.Sprintf("tx.authorizationList[%d]", i), item)
		if err != nil {
			return nil, err
		}
		if err := e.only("chainId", "address", "nonce", "yParity", "v", "r", "s"); err != nil {
			return nil, err
		}
		var a Authorization
		if a.ChainID, err = e.required("chainId", 256); err != nil {
			return nil, err
		}
		if a.Address, err = e.address("address"); err != nil {
			return nil, err
		}
		nonce, err := e.required("nonce", 64)
		if err != nil {
			return nil, err
		}
		a.Nonce = nonce.Uint64()
		for _, k := range []string{"yParity", "v", "r", "s"} {
			if _, err := e.quantity(k, 256); err != nil {
				return nil, err
			}
		}
		list = append(list, a)
	}
	return list, nil
}

// txJSON is r.Tx in canonical form.
func (r *Request) txJSON() json.RawMessage {
	t := r.Tx
	m := map[string]any{
		"type":  t.Type,
		"nonce": strconv.FormatUint(t.Nonce, 10),
		"gas":   strconv.FormatUint(t.Gas, 10),
		"value": "0",
		"data":  "0x" + hex.EncodeToString(t.Data),
		"to":    nil,
	}
	if t.Value != nil {
		m["value"] = t.Value.String()
	}
	if t.To != nil {
		m["to"] = Checksum(*t.To)
	}
	if r.From != nil {
		m["from"] = Checksum(*r.From)
	}
	for k, v := range map[string]*big.Int{"chainId": t.ChainID, "maxFeePerGas": t.MaxFeePerGas,
		"maxPriorityFeePerGas": t.MaxPriorityFeePerGas, "gasPrice": t.GasPrice} {
		if v != nil {
			m[k] = v.String()
		}
	}
	if r.accessList != nil {
		m["accessList"] = r.accessList
	}
	if len(t.Authorizations) > 0 {
		list := make([]map[string]string, len(t.Authorizations))
		for i, a := range t.Authorizations {
			list[i] = map[string]string{"chainId": "0", "address": Checksum(a.Address), "nonce": strconv.FormatUint(a.Nonce, 10)}
			if a.ChainID != nil {
				list[i]["chainId"] = a.ChainID.String()
			}
		}
		m["authorizationList"] = list
	}
	return mustJSON(m)
}

// Params is the request's canonical params, the inverse of ParseParams:
// ParseParams(r.Method, r.Params()) yields an equal request. Quantities are
// decimal strings, addresses EIP-55, bytes 0x-hex; the typed data is given
// back as received. A request with no method gives only its requestId.
func (r *Request) Params() map[string]json.RawMessage {
	p := map[string]json.RawMessage{}
	if r.RequestID != "" {
		p[keyRequestID] = mustJSON(r.RequestID)
	}
	switch r.Method {
	case MethodSignTransaction:
		if r.Tx != nil {
			p[keyTx] = r.txJSON()
		}
	case MethodPersonalSign:
		// Text that would not read back as the same bytes (not UTF-8, or
		// spelling 0x-hex) is given as hex: the bytes are what is signed.
		if r.MessageHex || !utf8.Valid(r.Message) || isHexMessage(string(r.Message)) {
			p[keyMessage] = mustJSON("0x" + hex.EncodeToString(r.Message))
		} else {
			p[keyMessage] = mustJSON(string(r.Message))
		}
	case MethodSignTypedData:
		if r.TypedData != nil {
			p[keyTypedData] = r.TypedData.json()
		}
	case MethodSign:
		p[keyHash] = mustJSON("0x" + hex.EncodeToString(r.Hash))
	}
	return p
}

// mustJSON marshals v, which is built of strings, numbers, maps and slices
// and so always marshals.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("signing: marshal: " + err.Error())
	}
	return b
}
