package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/signing/service"
)

// Sign submits a signing request (body is its JSON). A refusal is a Result
// with Success false, not an error; wait > 0 waits up to that long for a
// human to answer an ask.
func (c *Client) Sign(ctx context.Context, body []byte, wait time.Duration) (service.Result, error) {
	path := "/api/sandbox/sign"
	if wait > 0 {
		path += "?wait=" + url.QueryEscape(wait.String())
	}
	return c.signResult(ctx, http.MethodPost, path, body)
}

// SignStatus is the state or result of the signing request waiting on
// approval id.
func (c *Client) SignStatus(ctx context.Context, id string) (service.Result, error) {
	return c.signResult(ctx, http.MethodGet, "/api/sandbox/sign/pending?id="+url.QueryEscape(id), nil)
}

// SignAnswer approves or rejects the signing request waiting on approval
// id; it needs an operator token.
func (c *Client) SignAnswer(ctx context.Context, id string, approve bool) (service.Result, error) {
	path := "/api/sandbox/sign/reject"
	if approve {
		path = "/api/sandbox/sign/approve"
	}
	body, _ := json.Marshal(signAnswerBody{ID: id})
	return c.signResult(ctx, http.MethodPost, path, body)
}

// signResult makes a signing call whose 200, 202 and 403-with-a-decision
// answers are all results.
func (c *Client) signResult(ctx context.Context, method, path string, body []byte) (service.Result, error) {
	var res service.Result
	r, err := http.NewRequestWithContext(ctx, method, c.Base+path, bytes.NewReader(body))
	if err != nil {
		return res, warden.Errorf(warden.EInternal, "build the request to the daemon").Wrap(err)
	}
	r.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		if err := Sign(r, c.Token, body, time.Now()); err != nil {
			return res, warden.Errorf(warden.EInternal, "sign the request to the daemon").Wrap(err)
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(r)
	if err != nil {
		return res, warden.Errorf(warden.EUnavailable, "the warden daemon at %s cannot be reached", c.Base).Wrap(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return res, warden.Errorf(warden.EUnavailable, "read the daemon's answer").Wrap(err)
	}
	if json.Unmarshal(data, &res) == nil && res.PolicyDecision.Verdict != "" {
		return res, nil
	}
	return res, answerError(resp, data)
}
