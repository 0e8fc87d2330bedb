package approval

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/agentwarden/warden"
)

// Webhook headers: the receiver recomputes the signature, lower-case hex of
// HMAC-SHA256 under the shared secret over timestamp + "." + body, and drops
// posts whose timestamp is old.
const (
	WebhookSignature = "X-Warden-Signature"
	WebhookTimestamp = "X-Warden-Timestamp"
)

// Webhook posts every new and ended approval as JSON to URL:
// {"event": "asked"|"ended", "approval": {...}, "content": "..."}. Answers
// do not come back this way: the receiver (a bot, a pager) answers through
// the API with an operator token.
type Webhook struct {
	URL    string
	Secret []byte
	Client *http.Client // nil: 10 s timeout
	Now    func() time.Time
}

// Name implements Notifier.
func (w *Webhook) Name() string { return "webhook" }

// Asked implements Notifier.
func (w *Webhook) Asked(ctx context.Context, a warden.Approval) error { return w.post(ctx, "asked", a) }

// Ended implements Notifier.
func (w *Webhook) Ended(ctx context.Context, a warden.Approval) error { return w.post(ctx, "ended", a) }

// WebhookSign is the signature of body sent at timestamp ts.
func WebhookSign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func (w *Webhook) post(ctx context.Context, event string, a warden.Approval) error {
	body, err := json.Marshal(map[string]any{"event": event, "approval": a, "content": Content(&a)})
	if err != nil {
		return err
	}
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(WebhookTimestamp, ts)
	req.Header.Set(WebhookSignature, WebhookSign(w.Secret, ts, body))
	c := w.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("post to the approval webhook: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the approval webhook answered %s", resp.Status)
	}
	return nil
}
