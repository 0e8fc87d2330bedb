package httpapi

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
)

// Client speaks to a running daemon. Its Check has the gate's signature, so
// `warden check --remote` and the hooks use it in place of the gate.
type Client struct {
	// Base is the daemon's URL, e.g. http://127.0.0.1:4751, or http://warden
	// for a Unix socket dialled by HTTP.
	Base string
	// Token signs every request when set; without it only the Unix socket
	// answers, with agent scope.
	Token string
	HTTP  *http.Client
	// NoApproval makes Check open no approval for an ask: for hooks of
	// hosts that ask the human themselves.
	NoApproval bool
	// DryRun makes every check a question that reserves nothing (the daily
	// spend cap, rate slots): for `warden check --remote`.
	DryRun bool
}

// UnixClient is a client for the daemon's Unix socket at path.
func UnixClient(path, token string) *Client {
	return DialClient(func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}, token)
}

// DialClient is a client whose connections to the daemon come from dial,
// which finds the daemon's socket however it likes.
func DialClient(dial func(context.Context) (net.Conn, error), token string) *Client {
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConnsPerHost: 64,
	}
	return &Client{Base: "http://warden", Token: token, HTTP: &http.Client{Transport: tr}}
}

// Unreachable reports whether err says the daemon could not be connected to
// at all: the request never left this process, so the daemon decided and
// recorded nothing, and the caller may decide it elsewhere.
func Unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Check asks the daemon to decide req; an error means no decision was made
// and the caller must deny.
func (c *Client) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	q := url.Values{}
	if c.NoApproval {
		q.Set("approval", "none")
	}
	var d warden.Decision
	err := c.do(ctx, http.MethodPost, c.checkPath(q), req, &d)
	return d, err
}

// checkPath is /v1/check with q, and dry_run=1 when c.DryRun.
func (c *Client) checkPath(q url.Values) string {
	if c.DryRun {
		q.Set("dry_run", "1")
	}
	if len(q) == 0 {
		return "/v1/check"
	}
	return "/v1/check?" + q.Encode()
}

// CheckOpen is Check that, for an ask, opens an approval on channel (or joins
// the one pending for the same input and session) and returns at once; the
// decision carries the approval's id. It implements hook.Opener.
func (c *Client) CheckOpen(ctx context.Context, req *warden.Request, channel string) (warden.Decision, error) {
	var d warden.Decision
	err := c.do(ctx, http.MethodPost, c.checkPath(url.Values{"approval": {channel}}), req, &d)
	return d, err
}

// CheckWait is Check that, for an ask, waits for a human's answer and
// returns the decision it ended in.
func (c *Client) CheckWait(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	var d warden.Decision
	err := c.do(ctx, http.MethodPost, c.checkPath(url.Values{"wait": {"1"}}), req, &d)
	return d, err
}

// Approvals lists approvals, only the pending ones when pending is set.
func (c *Client) Approvals(ctx context.Context, pending bool) ([]warden.Approval, error) {
	path := "/v1/approvals?state=all"
	if pending {
		path = "/v1/approvals?state=pending"
	}
	var out struct {
		Approvals []warden.Approval `json:"approvals"`
	}
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out.Approvals, err
}

// Approval returns one approval.
func (c *Client) Approval(ctx context.Context, id string) (warden.Approval, error) {
	var a warden.Approval
	err := c.do(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id), nil, &a)
	return a, err
}

// Wait waits up to timeout for approval id to end and returns it (still
// pending if it did not end in time).
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (warden.Approval, error) {
	var a warden.Approval
	err := c.do(ctx, http.MethodGet, "/v1/approvals/"+url.PathEscape(id)+"/wait?timeout="+url.QueryEscape(timeout.String()), nil, &a)
	return a, err
}

// Answer answers approval id from channel.
func (c *Client) Answer(ctx context.Context, id string, ans warden.Answer, channel, by string) (warden.Approval, error) {
	path := "/v1/approvals/" + url.PathEscape(id) + "/approve"
	body := answerBody{Answer: string(ans), Channel: channel, By: by}
	if ans == warden.AnswerDeny {
		path = "/v1/approvals/" + url.PathEscape(id) + "/deny"
		body.Answer = ""
	}
	var a warden.Approval
	err := c.do(ctx, http.MethodPost, path, body, &a)
	return a, err
}

// SetKillSwitch turns the kill switch on or off.
func (c *Client) SetKillSwitch(ctx context.Context, on bool, by string) error {
	return c.do(ctx, http.MethodPost, "/v1/kill", map[string]any{"on": on, "by": by}, nil)
}

// Health reports whether the daemon answers.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/v1/health", nil, nil)
}

// do sends one request and decodes the answer into out. A non-2xx answer is
// a *warden.Error carrying the daemon's message.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return warden.Errorf(warden.EInternal, "encode the request").Wrap(err)
		}
		body = b
	}
	r, err := http.NewRequestWithContext(ctx, method, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return warden.Errorf(warden.EInternal, "build the request to the daemon").Wrap(err)
	}
	if in != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		if err := Sign(r, c.Token, body, time.Now()); err != nil {
			return warden.Errorf(warden.EInternal, "sign the request to the daemon").Wrap(err)
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(r)
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "the warden daemon at %s cannot be reached", c.Base).Wrap(err).
			WithHint("start it with `warden serve`, or drop --remote to decide in this process")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return warden.Errorf(warden.EUnavailable, "read the daemon's answer").Wrap(err)
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return warden.Errorf(warden.EUnavailable, "the daemon's answer is not the JSON expected").Wrap(err)
	}
	return nil
}

// answerError is the error a non-2xx answer of the daemon carries.
func answerError(resp *http.Response, data []byte) error {
	var e errorBody
	if json.Unmarshal(data, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("the daemon answered %s", resp.Status)
	}
	code := warden.EUnavailable
	for c, s := range statusOf {
		if s == resp.StatusCode {
			code = c
		}
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		code = warden.EInvalid
	}
	return warden.Errorf(code, "%s", e.Error).WithHint(e.Hint)
}
