package httpexchange

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// maxBody bounds an answer's body; a longer one is refused, not truncated.
const maxBody = 1 << 20

// IdempotencyKey is the header that carries an execution's trace id.
const IdempotencyKey = "Idempotency-Key"

// Backend is a venue's REST API as a finance.Backend. Build it with New; the
// zero value is not usable. It is safe for concurrent use.
type Backend struct {
	base      string // scheme://host[/path], for messages
	token     string
	timeout   time.Duration
	endpoints endpoints
	http      *http.Client
	now       func() time.Time
}

var _ finance.Backend = (*Backend)(nil)

// New validates c and returns the backend. The error names what is wrong
// and never holds the token.
func New(c Config) (*Backend, error) {
	if !validToken(c.Token) {
		return nil, invalid("the bearer token holds spaces, control or non-ASCII characters")
	}
	base, err := parseBase(c.BaseURL, c.Token)
	if err != nil {
		return nil, err
	}
	eps, err := c.Endpoints.resolve(base)
	if err != nil {
		return nil, err
	}
	if c.Timeout < 0 {
		return nil, invalid("the timeout %v is negative", c.Timeout)
	}
	b := &Backend{base: base.String(), token: c.Token, timeout: c.Timeout, endpoints: eps, now: c.Now}
	if b.timeout == 0 {
		b.timeout = DefaultTimeout
	}
	if b.now == nil {
		b.now = time.Now
	}
	hc := &http.Client{}
	if c.HTTP != nil {
		copied := *c.HTTP
		hc = &copied
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return ErrRedirect }
	b.http = hc
	return b, nil
}

// Name implements finance.Backend.
func (b *Backend) Name() string { return "http" }

// String names the venue, without the token.
func (b *Backend) String() string { return "http exchange at " + b.base }

// GoString is String, so %#v does not print the token either.
func (b *Backend) GoString() string { return b.String() }

// call is one request to the venue.
type call struct {
	op     string // for messages: "price", "swap"…
	method string
	url    string
	body   any    // JSON-encoded when non-nil
	trace  string // an execution's trace id; "" for a read
}

// do sends c and returns the body of a 2xx answer. Every error is a
// *warden.Error whose text holds neither the token nor more than 200 bytes
// of the venue's body.
func (b *Backend) do(ctx context.Context, c call) ([]byte, error) {
	data, err := b.roundTrip(ctx, c)
	if err != nil {
		return nil, b.fail(c, err)
	}
	return data, nil
}

// fail wraps a call's error for the caller: the operation and the venue in
// the message, the cause scrubbed of the token.
func (b *Backend) fail(c call, err error) error {
	return warden.Errorf(warden.EUnavailable, "%s on the exchange at %s failed", c.op, b.base).Wrap(scrub(err, b.token))
}

func (b *Backend) roundTrip(ctx context.Context, c call) ([]byte, error) {
	var body io.Reader
	if c.body != nil {
		data, err := json.Marshal(c.body)
		if err != nil {
			return nil, fmt.Errorf("encode the request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // already over: nothing is sent
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, body)
	if err != nil {
		return nil, fmt.Errorf("build the request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "warden-httpexchange")
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	if c.trace != "" {
		req.Header.Set(IdempotencyKey, c.trace)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, b.transportError(ctx, c, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if resp.StatusCode/100 != 2 {
		// The status is the venue's answer, however much of the body came.
		return nil, &StatusError{StatusCode: resp.StatusCode, Body: excerpt(data, b.token)}
	}
	if err != nil {
		return nil, b.transportError(ctx, c, fmt.Errorf("read the answer: %w", err))
	}
	if len(data) > maxBody {
		return nil, b.uncertain(c, fmt.Errorf("%w: the answer is larger than 1 MiB", ErrMalformed))
	}
	return data, nil
}

// transportError keeps what a caller needs from a failed exchange (a
// deadline, a cancellation, a redirect) and drops the URL that net/http
// puts in its errors, which for a redirect is the venue's Location.
func (b *Backend) transportError(ctx context.Context, c call, err error) error {
	if errors.Is(err, ErrRedirect) {
		return ErrRedirect // a 3xx: the venue did nothing, and said where else to go
	}
	if cerr := ctx.Err(); cerr != nil {
		return b.uncertain(c, fmt.Errorf("no answer within %v: %w", b.timeout, cerr))
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		err = ue.Err
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return err // never connected: nothing was sent
	}
	return b.uncertain(c, err)
}

// uncertain marks err as leaving an execution's outcome unknown.
func (b *Backend) uncertain(c call, err error) error {
	if c.trace == "" {
		return err
	}
	return fmt.Errorf("%w (%w)", err, ErrOutcomeUnknown)
}
