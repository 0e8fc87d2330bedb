package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// approvalsFile is the approvals section as written in warden.yaml.
type approvalsFile struct {
	Timeout  string         `yaml:"timeout" want:"a duration such as 5m or 90s"`
	Always   []alwaysFile   `yaml:"always" want:"a list of rules added by \"always\" answers"`
	Telegram telegramFile   `yaml:"telegram" want:"a mapping with token_env, chat_id and allowed_users"`
	Webhook  webhookFile    `yaml:"webhook" want:"a mapping with url and secret_env"`
	Daemon   daemonListFile `yaml:"daemon" want:"a mapping with socket and tcp"`
}

// alwaysFile is one rule an "always" answer added. Only input_hash decides;
// the other fields say what it was, for the people reading the file.
type alwaysFile struct {
	InputHash  string `yaml:"input_hash" want:"sha256: followed by 64 hex digits"`
	Capability string `yaml:"capability" want:"the capability of the approved request"`
	Action     string `yaml:"action" want:"the action of the approved request"`
	Resource   string `yaml:"resource" want:"what the approved request named (redacted)"`
	ApprovedBy string `yaml:"approved_by" want:"who answered always"`
	Approval   string `yaml:"approval" want:"the approval id"`
	Added      string `yaml:"added" want:"when, RFC 3339"`
}

type telegramFile struct {
	TokenEnv     string  `yaml:"token_env" want:"the environment variable holding the bot token, e.g. WARDEN_TELEGRAM_TOKEN"`
	ChatID       int64   `yaml:"chat_id" want:"the chat id approvals are posted to (a number)"`
	AllowedUsers []int64 `yaml:"allowed_users" want:"a list of Telegram user ids whose answers count" elem:"a Telegram user id (a number)"`
}

type webhookFile struct {
	URL       string `yaml:"url" want:"an http or https URL"`
	SecretEnv string `yaml:"secret_env" want:"the environment variable holding the signing secret"`
}

type daemonListFile struct {
	Socket string `yaml:"socket" want:"a path for the Unix socket, \"\" for warden.sock in the home"`
	TCP    string `yaml:"tcp" want:"HOST:PORT to also listen on, \"\" for none"`
}

// Approvals is the approvals section: how long asks wait, the always rules,
// the channels that tell humans, and where the daemon listens.
type Approvals struct {
	Timeout time.Duration
	// Always maps an input hash to a description of its rule.
	Always map[string]string
	// Telegram is configured when ChatID is not zero.
	Telegram TelegramChannel
	// Webhook is configured when URL is not empty.
	Webhook WebhookChannel
	// Socket is the daemon's Unix socket path ("" = warden.sock in the home);
	// TCP, when set, is where it also listens, with signed requests only.
	Socket, TCP string
}

// TelegramChannel posts approvals to a Telegram chat.
type TelegramChannel struct {
	TokenEnv     string
	ChatID       int64
	AllowedUsers []int64
}

// WebhookChannel posts approvals to a URL, signed with a secret.
type WebhookChannel struct {
	URL, SecretEnv string
}

// AlwaysRule is an "always" answer as written into the policy file.
type AlwaysRule struct {
	InputHash, Capability, Action, Resource, ApprovedBy, Approval string
	Added                                                         time.Time
}

var approvalsSection = &sectionDef[approvalsFile]{
	key: "approvals",
	defaultsOf: func() *approvalsFile {
		return &approvalsFile{Timeout: "5m", Always: []alwaysFile{}, Telegram: telegramFile{AllowedUsers: []int64{}}}
	},
	check:      checkApprovals,
	toRuntime:  approvalsToRuntime,
	failClosed: approvalsFailClosed,
}

func checkApprovals(f *approvalsFile, c *checker) {
	if d, err := time.ParseDuration(f.Timeout); err != nil || d <= 0 || d > 24*time.Hour {
		c.reportf([]any{"timeout"}, "timeout %s is not a duration between 1s and 24h, e.g. 5m", quote(f.Timeout))
	}
	for i, a := range f.Always {
		if !validInputHash(a.InputHash) {
			c.reportf([]any{"always", i, "input_hash"}, "input_hash %s is not sha256: followed by 64 lower-case hex digits", quote(a.InputHash))
		}
	}
	t := f.Telegram
	if t.ChatID != 0 || t.TokenEnv != "" || len(t.AllowedUsers) > 0 {
		if t.ChatID == 0 {
			c.reportf([]any{"telegram", "chat_id"}, "chat_id is missing; the chat approvals go to is needed")
		}
		if !envName(t.TokenEnv) {
			c.reportf([]any{"telegram", "token_env"}, "token_env %s is not an environment variable name; the token itself never goes in this file", quote(t.TokenEnv))
		}
		if len(t.AllowedUsers) == 0 {
			c.reportf([]any{"telegram", "allowed_users"}, "allowed_users is empty, so nobody could answer; list the Telegram user ids that may")
		}
	}
	if w := f.Webhook; w.URL != "" || w.SecretEnv != "" {
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			c.reportf([]any{"webhook", "url"}, "url %s is not an http or https URL", quote(w.URL))
		}
		if !envName(w.SecretEnv) {
			c.reportf([]any{"webhook", "secret_env"}, "secret_env %s is not an environment variable name; the receiver checks each post's signature with it", quote(w.SecretEnv))
		}
	}
	if f.Daemon.TCP != "" && !validListen(f.Daemon.TCP) {
		c.reportf([]any{"daemon", "tcp"}, "tcp %s is not HOST:PORT, e.g. 127.0.0.1:4751", quote(f.Daemon.TCP))
	}
	if s := f.Daemon.Socket; s != "" && !strings.HasPrefix(s, "/") {
		c.reportf([]any{"daemon", "socket"}, "socket %s is not an absolute path", quote(s))
	}
}

// validListen accepts HOST:PORT where port 0 picks a free port.
func validListen(s string) bool {
	h, p, err := net.SplitHostPort(s)
	if err != nil || h == "" {
		return false
	}
	_, err = strconv.ParseUint(p, 10, 16)
	return err == nil
}

func validInputHash(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// approvalsFailClosed drops every always rule of an invalid section: asks
// ask again until the file is fixed.
func approvalsFailClosed(_ []*yaml.Node, f *approvalsFile) string {
	return "until it is fixed no always rule applies and no approval channel but the terminal and the console runs"
}

func approvalsToRuntime(f *approvalsFile, p *Policy) {
	d, _ := time.ParseDuration(f.Timeout)
	p.Approvals = Approvals{
		Timeout: d, Always: map[string]string{},
		Telegram: TelegramChannel{TokenEnv: f.Telegram.TokenEnv, ChatID: f.Telegram.ChatID, AllowedUsers: slices.Clone(f.Telegram.AllowedUsers)},
		Webhook:  WebhookChannel{URL: f.Webhook.URL, SecretEnv: f.Webhook.SecretEnv},
		Socket:   f.Daemon.Socket, TCP: f.Daemon.TCP,
	}
	for _, a := range f.Always {
		p.Approvals.Always[a.InputHash] = fmt.Sprintf("%s %s %s (approved by %s, approval %s)", a.Capability, a.Action, a.Resource, a.ApprovedBy, a.Approval)
	}
}

// AddAlways appends an always rule to approvals.always in the policy file at
// path, atomically and under the file's lock, keeping comments. A rule for
// the same input hash already there is not added twice.
func AddAlways(path string, r AlwaysRule) error {
	if !validInputHash(r.InputHash) {
		return fmt.Errorf("add always rule: %q is not an input hash", r.InputHash)
	}
	return withLock(path, func() error {
		data, err := readFile(path)
		if err != nil {
			return err
		}
		l, err := Parse(data)
		if err != nil {
			return err
		}
		if _, ok := l.Policy.Approvals.Always[r.InputHash]; ok {
			return nil
		}
		var list []alwaysFile
		if f, ok := l.files[sectionIndex("approvals")].(*approvalsFile); ok && f != nil {
			list = slices.Clone(f.Always)
		}
		list = append(list, alwaysFile{InputHash: r.InputHash, Capability: r.Capability, Action: r.Action, Resource: r.Resource,
			ApprovedBy: r.ApprovedBy, Approval: r.Approval, Added: r.Added.UTC().Format(time.RFC3339)})
		value, err := yaml.Marshal(list)
		if err != nil {
			return err
		}
		t, err := resolve("approvals.always")
		if err != nil {
			return err
		}
		return set(path, t, "approvals.always", string(value))
	})
}
