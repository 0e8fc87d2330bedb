// Request authentication for the daemon's HTTP API: scoped tokens, which a
// request names by a public id and never sends, and an HMAC signature keyed by
// the token over each request with a timestamp and a single-use nonce, so a
// captured request cannot be altered or replayed and gives away no token.

package httpapi

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
)

// Scope is what a token may do. The zero value is no scope and allows nothing.
type Scope string

const (
	ScopeAgent    Scope = "agent"    // check, exec and sign requests
	ScopeOperator Scope = "operator" // everything an agent may do, plus approve, config and the kill switch
)

// Allows reports whether a token of scope s may use an endpoint that needs
// want: an operator token may use every endpoint, an agent token only agent
// endpoints. An unknown scope on either side allows nothing.
func (s Scope) Allows(want Scope) bool {
	switch s {
	case ScopeOperator:
		return want == ScopeOperator || want == ScopeAgent
	case ScopeAgent:
		return want == ScopeAgent
	}
	return false
}

const (
	tokenPrefix     = "wdn_"
	tokenSecretLen  = 32                              // random bytes in a token
	tokenSecretText = (tokenSecretLen*8 + 5) / 6      // their unpadded base64url length: 43
	nonceBytes      = 16                              // random bytes in a nonce made by Sign
	signatureText   = 2 * sha256.Size                 // lower-case hex HMAC-SHA256: 64
	maxTimestampLen = len("99999999999")              // unix seconds, well past year 5000
	tokenFormatHint = "wdn_agent_… or wdn_operator_…" // never a real token

	tokenIDInfix  = "_id_"                                // between the scope and the hex of a token id
	tokenIDDomain = "warden-token-id\x00"                 // hashed in front of the token, so an id equals no other hash of it
	tokenIDBytes  = 16                                    // bytes of SHA-256 kept in an id
	tokenIDHex    = 2 * tokenIDBytes                      // their lower-case hex: 32
	tokenIDHint   = "wdn_agent_id_… or wdn_operator_id_…" // never a real id
)

var secretEncoding = base64.RawURLEncoding.Strict()

// NewToken returns a fresh random token for scope: "wdn_" + scope + "_" +
// base64url (unpadded) of 32 random bytes.
func NewToken(scope Scope) (string, error) {
	if scope != ScopeAgent && scope != ScopeOperator {
		return "", warden.Errorf(warden.EInvalid, "new token: unknown scope %q (want agent or operator)", scope)
	}
	var secret [tokenSecretLen]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", warden.Errorf(warden.EInternal, "new token: read random bytes").Wrap(err)
	}
	return tokenPrefix + string(scope) + "_" + secretEncoding.EncodeToString(secret[:]), nil
}

// TokenScope reads the scope out of a token's text (wdn_agent_… or
// wdn_operator_…). It checks the form only, not whether the daemon accepts the
// token. Its errors never contain the token.
func TokenScope(token string) (Scope, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", malformedToken("it does not start with wdn_")
	}
	var scope Scope
	switch {
	case strings.HasPrefix(rest, string(ScopeAgent)+"_"):
		scope = ScopeAgent
	case strings.HasPrefix(rest, string(ScopeOperator)+"_"):
		scope = ScopeOperator
	default:
		return "", malformedToken("its scope is neither agent nor operator")
	}
	secret := rest[len(scope)+1:]
	if len(secret) != tokenSecretText {
		return "", malformedToken(fmt.Sprintf("its secret has %d characters, want %d", len(secret), tokenSecretText))
	}
	if b, err := secretEncoding.DecodeString(secret); err != nil || len(b) != tokenSecretLen {
		return "", malformedToken("its secret is not unpadded base64url")
	}
	return scope, nil
}

func malformedToken(why string) *warden.Error {
	return warden.Errorf(warden.EInvalid, "malformed token: %s", why).
		WithHint("a warden token looks like " + tokenFormatHint + " followed by 43 base64url characters; generate a new one")
}

// TokenID returns the public id of token, which a signed request sends in its
// Authorization header in place of the token:
//
//	"wdn_" + scope + "_id_" + hex(SHA-256("warden-token-id" + "\x00" + token)[:16])
//
// where scope is the token's (agent or operator), the hash is over the bytes
// of those strings, and hex is lower case: 32 digits. So an agent token's id
// looks like wdn_agent_id_ followed by 32 hex digits, an operator token's like
// wdn_operator_id_…. The id names the token without giving it away; the token
// itself is only ever the key of the request's HMAC. Its errors, for a
// malformed token, are TokenScope's and never contain the token.
func TokenID(token string) (string, error) {
	scope, err := TokenScope(token)
	if err != nil {
		return "", err
	}
	return tokenID(scope, token), nil
}

// tokenID is TokenID for a token already known to be well formed, of scope.
func tokenID(scope Scope, token string) string {
	sum := sha256.Sum256([]byte(tokenIDDomain + token))
	return tokenPrefix + string(scope) + tokenIDInfix + hex.EncodeToString(sum[:tokenIDBytes])
}

// validTokenID reports whether id has the form TokenID gives: "wdn_", a scope,
// "_id_" and 32 lower-case hex digits.
func validTokenID(id string) bool {
	rest, ok := strings.CutPrefix(id, tokenPrefix)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, string(ScopeAgent)+tokenIDInfix); !ok {
		if rest, ok = strings.CutPrefix(rest, string(ScopeOperator)+tokenIDInfix); !ok {
			return false
		}
	}
	if len(rest) != tokenIDHex {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Tokens is the set of tokens the daemon accepts, each with its scope, found
// by its id (see TokenID). It holds the tokens themselves in memory, as it
// must: each is the key that checks its requests' signatures. A nil or zero
// Tokens accepts nothing. It is safe for concurrent use; it never changes once
// built.
type Tokens struct {
	byID map[string]acceptedToken
}

type acceptedToken struct {
	token string // the secret, the HMAC key of its requests
	scope Scope
}

// NewTokens returns the set of tokens given. Every token must be well formed;
// a token given twice is fine. The error names a bad token by its position,
// never by its text.
func NewTokens(tokens ...string) (*Tokens, error) {
	t := &Tokens{byID: make(map[string]acceptedToken, len(tokens))}
	for i, tok := range tokens {
		scope, err := TokenScope(tok)
		if err != nil {
			return nil, fmt.Errorf("token %d of %d: %w", i+1, len(tokens), err)
		}
		t.byID[tokenID(scope, tok)] = acceptedToken{token: tok, scope: scope}
	}
	return t, nil
}

// Scope returns the scope of token, and false when the set does not hold it.
// The token is found by its id and then compared in constant time, so a
// lookup's timing depends on the id, which is public, not on how much of the
// secret a guess got right.
func (t *Tokens) Scope(token string) (Scope, bool) {
	id, err := TokenID(token)
	if err != nil {
		return "", false
	}
	got, scope, ok := t.lookup(id)
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
		return "", false
	}
	return scope, true
}

// lookup returns the token whose id is id, and its scope.
func (t *Tokens) lookup(id string) (token string, scope Scope, ok bool) {
	if t == nil {
		return "", "", false
	}
	a, ok := t.byID[id]
	return a.token, a.scope, ok
}

// Len returns how many distinct tokens the set holds.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.byID)
}

// Headers of a signed request, besides "Authorization: Bearer <token id>",
// where the id is TokenID's. The token itself is never sent.
const (
	HeaderTimestamp = "X-Warden-Timestamp" // unix seconds, decimal
	HeaderNonce     = "X-Warden-Nonce"     // 16 to 64 characters of [A-Za-z0-9_-], never used before
	HeaderSignature = "X-Warden-Signature" // lower-case hex HMAC-SHA256 of StringToSign, keyed by the token (not its id)
)

// MaxSkew is how far a request's timestamp may be from the daemon's clock.
const MaxSkew = 30 * time.Second

// DefaultMaxNonces is how many nonces a Verifier remembers at most. A nonce
// is kept until its request's timestamp is stale, about MaxSkew for a
// request signed just now, so this admits some 16,000 signed requests a
// second; full, the memory takes about 18 MiB of heap.
const DefaultMaxNonces = 500_000

// StringToSign returns the text a request's signature covers: method,
// requestURI (the path and "?" raw query exactly as sent), the lower-case hex
// SHA-256 of the body, the timestamp and the nonce, joined by "\n".
func StringToSign(method, requestURI string, body []byte, timestamp, nonce string) string {
	sum := sha256.Sum256(body)
	return method + "\n" + requestURI + "\n" + hex.EncodeToString(sum[:]) + "\n" + timestamp + "\n" + nonce
}

// signature returns the lower-case hex HMAC-SHA256 of msg keyed by token.
func signature(token, msg string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// requestURI is the request target a signature covers: as received on the
// server, as it will be sent on the client (where RequestURI is empty).
func requestURI(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}

// Sign makes r a signed request for body, which must be the exact bytes sent:
// it sets "Authorization: Bearer <token id>" (see TokenID), a timestamp taken
// from now, a fresh random nonce and the signature, HMAC-SHA256 of
// StringToSign keyed by the token. The token itself goes in no header. Its
// errors never contain the token.
func Sign(r *http.Request, token string, body []byte, now time.Time) error {
	scope, err := TokenScope(token)
	if err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	var n [nonceBytes]byte
	if _, err := rand.Read(n[:]); err != nil {
		return warden.Errorf(warden.EInternal, "sign request: read random bytes").Wrap(err)
	}
	nonce := base64.RawURLEncoding.EncodeToString(n[:])
	ts := strconv.FormatInt(now.Unix(), 10)
	r.Header.Set("Authorization", "Bearer "+tokenID(scope, token))
	r.Header.Set(HeaderTimestamp, ts)
	r.Header.Set(HeaderNonce, nonce)
	r.Header.Set(HeaderSignature, signature(token, StringToSign(r.Method, requestURI(r), body, ts, nonce)))
	return nil
}

// AuthError is why Verify refused a request. Msg says what was wrong and what
// to do, and is safe to send to the client: it never holds a header's value.
type AuthError struct {
	Status int    // the HTTP status to answer with: 401, or 503 when the daemon cannot remember another nonce
	Msg    string // what was wrong and what to do
}

func (e *AuthError) Error() string { return e.Msg }

func unauthorized(format string, args ...any) *AuthError {
	return &AuthError{Status: http.StatusUnauthorized, Msg: fmt.Sprintf(format, args...)}
}

// Verifier checks signed requests. Its zero value uses time.Now, remembers up to
// DefaultMaxNonces nonces and, with no Tokens, refuses every request. It is safe
// for concurrent use; do not copy it after the first Verify.
type Verifier struct {
	Tokens *Tokens
	Now    func() time.Time // nil means time.Now

	// MaxNonces bounds the nonces remembered (each until its request's
	// timestamp is stale). When that many are remembered and none has aged
	// out, Verify refuses new requests rather than forget one that could
	// still be replayed. 0 means DefaultMaxNonces.
	MaxNonces int

	mu     sync.Mutex
	seen   map[nonceKey]struct{} // the nonces remembered
	expiry []seenNonce           // the same, with when each may be forgotten, oldest first
	head   int                   // expiry[:head] are forgotten
}

// nonceKey is what a Verifier remembers of a nonce: 128 bits of its SHA-256,
// a fixed size whatever the nonce's length.
type nonceKey [16]byte

type seenNonce struct {
	key    nonceKey
	forget time.Time
}

// Verify authenticates r, whose body has already been read into body, and
// returns the scope of its token. The Authorization header must carry the
// token's id (see TokenID), never the token, and the signature must be keyed
// by the token that id names. Every error is an *AuthError. A nonce is
// remembered only once the signature checks out, so unsigned requests cannot
// fill the Verifier's memory.
func (v *Verifier) Verify(r *http.Request, body []byte) (Scope, error) {
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}

	id, err := bearer(r)
	if err != nil {
		return "", err
	}
	if _, err := TokenScope(id); err == nil {
		return "", unauthorized("the Authorization header carries the token itself, which must never be sent: " +
			"send its id (wdn_<scope>_id_…, see httpapi.TokenID) and sign the request with the token; " +
			"anyone on the path may have read this one, so replace it (warden token new) and stop accepting it")
	}
	if !validTokenID(id) {
		return "", unauthorized("the bearer is not a warden token id; send one that looks like %s", tokenIDHint)
	}
	token, scope, ok := v.Tokens.lookup(id)
	if !ok {
		return "", unauthorized("unknown token: the daemon accepts no token with this id; use one from the daemon's token file")
	}

	ts, err := single(r, HeaderTimestamp)
	if err != nil {
		return "", err
	}
	sec, ok := parseUnix(ts)
	if !ok {
		return "", unauthorized("the %s header must be the unix time in seconds, as decimal digits", HeaderTimestamp)
	}
	if skew := now.Sub(time.Unix(sec, 0)); skew > MaxSkew || skew < -MaxSkew {
		return "", unauthorized("the request's timestamp is %s away from the daemon's clock; requests must be signed within ±%ds: check the clock",
			formatSkew(skew), int(MaxSkew/time.Second))
	}

	nonce, err := single(r, HeaderNonce)
	if err != nil {
		return "", err
	}
	if !validNonce(nonce) {
		return "", unauthorized("the %s header must be 16 to 64 characters of A-Z, a-z, 0-9, _ and -, fresh for every request", HeaderNonce)
	}

	sig, err := single(r, HeaderSignature)
	if err != nil {
		return "", err
	}
	want := signature(token, StringToSign(r.Method, requestURI(r), body, ts, nonce))
	// The length check leaks only the length, which is public; a valid
	// signature is 64 lower-case hex digits, so case changes fail too.
	if len(sig) != signatureText || !hmac.Equal([]byte(sig), []byte(want)) {
		return "", unauthorized("bad signature: sign the method, the path and query as sent, the exact body, the timestamp and the nonce with the token this id names")
	}

	if err := v.remember(nonce, now, time.Unix(sec, 0)); err != nil {
		return "", err
	}
	return scope, nil
}

// bearer returns the value of r's one "Authorization: Bearer" header: a token
// id, if the client is right.
func bearer(r *http.Request) (string, *AuthError) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", unauthorized("missing bearer token id: send Authorization: Bearer <token id>, the id of an agent or operator token (see httpapi.TokenID)")
	}
	if len(vals) > 1 {
		return "", unauthorized("more than one Authorization header: send exactly one")
	}
	scheme, id, ok := strings.Cut(vals[0], " ")
	id = strings.TrimSpace(id)
	if !ok || !strings.EqualFold(scheme, "Bearer") || id == "" {
		return "", unauthorized("missing bearer token id: the Authorization header must be Bearer <token id>")
	}
	return id, nil
}

// single returns the value of r's one header name.
func single(r *http.Request, name string) (string, *AuthError) {
	vals := r.Header.Values(name)
	switch len(vals) {
	case 0:
		return "", unauthorized("missing %s header: sign the request (see httpapi.Sign)", name)
	case 1:
		return vals[0], nil
	}
	return "", unauthorized("more than one %s header: send exactly one", name)
}

func parseUnix(s string) (int64, bool) {
	if s == "" || len(s) > maxTimestampLen {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// formatSkew prints the distance between two clocks in whole seconds.
func formatSkew(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	if d < 0 { // the most negative duration has no positive counterpart
		d = 1<<63 - 1
	}
	return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + "s"
}

func validNonce(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// remember records nonce as used at now, refusing one already used and
// refusing every new one while the memory is full of unexpired nonces.
func (v *Verifier) remember(nonce string, now, signedAt time.Time) *AuthError {
	sum := sha256.Sum256([]byte(nonce))
	key := nonceKey(sum[:16])
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = make(map[nonceKey]struct{})
	}
	v.prune(now)
	if _, ok := v.seen[key]; ok {
		return unauthorized("replayed request: this nonce was already used; sign every request with a fresh nonce")
	}
	limit := v.MaxNonces
	if limit <= 0 {
		limit = DefaultMaxNonces
	}
	if len(v.seen) >= limit {
		return &AuthError{Status: http.StatusServiceUnavailable,
			Msg: fmt.Sprintf("the daemon is remembering %d recent requests, its limit; retry in a few seconds", limit)}
	}
	// A request is accepted while its timestamp is within MaxSkew of the
	// clock, so it can be replayed until signedAt+MaxSkew; a second more
	// covers the timestamp's rounding. The time left is measured from now,
	// so the forgetting runs on the monotonic clock.
	forget := now.Add(signedAt.Add(MaxSkew + time.Second).Sub(now))
	v.seen[key] = struct{}{}
	v.expiry = append(v.expiry, seenNonce{key, forget})
	return nil
}

// prune forgets nonces that can no longer be replayed. The queue is in
// insertion order, and forget times need not be (timestamps differ, clocks
// step): a nonce behind a later one is kept longer than needed, never
// shorter.
func (v *Verifier) prune(now time.Time) {
	for v.head < len(v.expiry) && !now.Before(v.expiry[v.head].forget) {
		delete(v.seen, v.expiry[v.head].key)
		v.expiry[v.head] = seenNonce{}
		v.head++
	}
	if v.head > 0 && v.head >= len(v.expiry)/2 {
		n := copy(v.expiry, v.expiry[v.head:])
		clear(v.expiry[n:])
		v.expiry = v.expiry[:n]
		v.head = 0
	}
}
