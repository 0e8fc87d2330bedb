// Package telegram is the Telegram approval channel: it posts every pending
// approval to one chat with a button per answer the approval can take (approve
// once, deny, session, always) and one that shows the full request, records
// the presses of the users it trusts through the approval queue, and edits the
// message to show the outcome once the approval ends.
//
// Only presses by a user in Config.AllowedUsers, made in the configured chat,
// count; every other press is refused and logged. Messages are plain text with
// each value of a request kept on its own line, so nothing an agent puts in a
// request can format a message or add lines that pass for warden's. Link
// previews are off, so Telegram never fetches a URL a request holds. The bot
// token is never logged and never part of an error: the Bot API puts it in
// every URL, so each error from the client is scrubbed of it.
package telegram

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// DefaultPollTimeout is how long one getUpdates request waits for a press.
const DefaultPollTimeout = 50 * time.Second

// callTimeout bounds every Bot API call but the long poll, so a Telegram
// that hangs cannot hold up the approval queue for long.
const callTimeout = 10 * time.Second

// Answerer takes the answers pressed in Telegram; *approval.Queue implements
// it. An error from Answer means the answer was not recorded (the approval
// already ended, cannot take that answer, or the store failed); its
// *warden.Error message, when there is one, is shown to the presser.
type Answerer interface {
	Answer(ctx context.Context, id string, ans warden.Answer, who approval.Who) (warden.Approval, error)
	Get(ctx context.Context, id string) (warden.Approval, error)
}

var (
	_ Answerer          = (*approval.Queue)(nil)
	_ approval.Notifier = (*Channel)(nil)
)

// Config configures a Channel. The zero value is invalid: Token and ChatID
// are required.
type Config struct {
	// Token is the bot token from @BotFather. It is never logged or put in
	// an error.
	Token string
	// ChatID is the chat approvals are posted to; only presses made in it
	// count.
	ChatID int64
	// AllowedUsers are the Telegram user ids whose presses answer approvals.
	// Empty refuses every press.
	AllowedUsers []int64
	// ServerURL is the Bot API base URL; "" is https://api.telegram.org.
	ServerURL string
	// HTTPClient makes the Bot API calls; nil is a client whose timeout
	// outlasts the long poll. A client with a timeout must allow more than
	// PollTimeout.
	HTTPClient *http.Client
	// PollTimeout is how long one getUpdates request waits for a press, in
	// whole seconds; zero is DefaultPollTimeout.
	PollTimeout time.Duration
}

// Channel is the Telegram approval channel. Create it with New; tell the
// approval queue about it (it is an approval.Notifier) and call Run to take
// button presses.
type Channel struct {
	bot     *bot.Bot
	token   string
	chatID  int64
	allowed map[int64]bool
	answers Answerer
	log     *slog.Logger

	mu       sync.Mutex
	messages map[string]int // approval id → id of the message that asks it
}

// tokenPattern is the shape of a bot token: the bot's id, a colon, a
// secret. Compiled on first use, not at package init.
var tokenPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`) })

// New checks cfg and returns a channel that answers through answers. It makes
// no call to Telegram. log receives refused presses and Bot API failures; nil
// drops them.
func New(cfg Config, answers Answerer, log *slog.Logger) (*Channel, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if answers == nil {
		return nil, warden.Errorf(warden.EInternal, "telegram: no approval queue to answer through")
	}
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, warden.Errorf(warden.EInvalid, "telegram: no bot token").
			WithHint("create a bot with @BotFather and set its token")
	}
	if !tokenPattern().MatchString(cfg.Token) {
		return nil, warden.Errorf(warden.EInvalid, "telegram: the bot token is malformed").
			WithHint("copy the token @BotFather gave you whole: digits, a colon, then letters, digits, _ and -")
	}
	if cfg.ChatID == 0 {
		return nil, warden.Errorf(warden.EInvalid, "telegram: no chat id").
			WithHint("set the id of the chat approvals go to; a group's id is negative")
	}
	server := "https://api.telegram.org"
	if cfg.ServerURL != "" {
		u, err := url.Parse(cfg.ServerURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, warden.Errorf(warden.EInvalid, "telegram: server url %q is not an http(s) base URL", cfg.ServerURL).
				WithHint("leave it empty for https://api.telegram.org, or give a local Bot API server such as http://127.0.0.1:8081")
		}
		server = strings.TrimRight(cfg.ServerURL, "/")
	}
	poll := cfg.PollTimeout
	if poll == 0 {
		poll = DefaultPollTimeout
	}
	if poll < time.Second {
		return nil, warden.Errorf(warden.EInvalid, "telegram: poll timeout %s is under a second", cfg.PollTimeout).
			WithHint("leave it zero for the default of 50s")
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: poll + callTimeout}
	} else if client.Timeout != 0 && client.Timeout <= poll {
		return nil, warden.Errorf(warden.EInvalid, "telegram: the HTTP client times out after %s, before a long poll of %s ends", client.Timeout, poll).
			WithHint("give the client a longer timeout, or none")
	}
	if len(cfg.AllowedUsers) == 0 {
		log.Warn("telegram: no allowed users, so every button press will be refused")
	}
	c := &Channel{
		token:    cfg.Token,
		chatID:   cfg.ChatID,
		allowed:  make(map[int64]bool, len(cfg.AllowedUsers)),
		answers:  answers,
		log:      log,
		messages: map[string]int{},
	}
	for _, id := range cfg.AllowedUsers {
		c.allowed[id] = true
	}
	b, err := bot.New(cfg.Token,
		bot.WithServerURL(server),
		bot.WithSkipGetMe(),
		// The client asks for a long poll one second shorter than this.
		bot.WithHTTPClient(poll.Truncate(time.Second)+time.Second, client),
		bot.WithAllowedUpdates(bot.AllowedUpdates{"callback_query"}),
		bot.WithDefaultHandler(c.update),
		// One press at a time, and Run returns only once the last is handled.
		bot.WithNotAsyncHandlers(),
		bot.WithErrorsHandler(func(err error) {
			c.log.Warn("telegram: Bot API call failed", "error", c.scrub(err))
		}),
		bot.WithDebugHandler(func(string, ...any) {}),
	)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "telegram: could not set up the bot").Wrap(c.scrub(err))
	}
	c.bot = b
	return c, nil
}

// Name is the channel's name in logs: "telegram".
func (c *Channel) Name() string { return "telegram" }

// Run takes button presses by long polling the Bot API until ctx ends, then
// returns nil. It fails at once only when Telegram refuses the token; any
// other failure is logged and retried.
func (c *Channel) Run(ctx context.Context) error {
	if _, err := c.bot.GetMe(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, bot.ErrorUnauthorized) || errors.Is(err, bot.ErrorNotFound) {
			return warden.Errorf(warden.EInvalid, "telegram refused the bot token").
				WithHint("check the token with @BotFather; it changes when the bot's token is revoked").Wrap(c.scrub(err))
		}
		c.log.Warn("telegram: could not reach the Bot API; will keep trying", "error", c.scrub(err))
	}
	c.bot.Start(ctx)
	return nil
}
