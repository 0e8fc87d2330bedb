package httpexchange

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// DefaultTimeout bounds each call, the answer's body included, when
// Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says where the venue is and how to reach it. The zero value is not
// valid: BaseURL is required.
type Config struct {
	// BaseURL is the venue's absolute http or https URL, e.g.
	// https://venue.example/api; the endpoints' paths are appended to it.
	// It may carry neither credentials (user:password@) nor a query. Plain
	// http is refused with a Token unless the host is loopback, so the
	// token never crosses a network in clear text.
	BaseURL string
	// Token is sent as "Authorization: Bearer <Token>"; empty sends none.
	// It never appears in an error, nor when the Config is printed.
	Token string
	// Timeout bounds each call; zero is DefaultTimeout.
	Timeout time.Duration
	// Endpoints are the paths of each call; an empty field is its default
	// from DefaultEndpoints.
	Endpoints Endpoints
	// HTTP is the client to send with; nil uses a new one over
	// http.DefaultTransport. It is copied, never modified: the copy follows
	// no redirect whatever the original's CheckRedirect says.
	HTTP *http.Client
	// Now stamps a portfolio or a fill whose answer has no time; nil is
	// time.Now.
	Now func() time.Time
}

// String prints the Config without its token.
func (c Config) String() string {
	tok := "none"
	if c.Token != "" {
		tok = redacted
	}
	return fmt.Sprintf("httpexchange.Config{BaseURL: %q, Token: %s, Timeout: %v, Endpoints: %+v}", c.BaseURL, tok, c.Timeout, c.Endpoints)
}

// GoString prints the Config without its token, for %#v.
func (c Config) GoString() string { return c.String() }

// Endpoints are the paths of the venue's calls, relative to the base URL.
// Each starts with "/" and holds no query. The zero value means every
// default.
type Endpoints struct {
	Price     string // GET
	Portfolio string // GET
	Simulate  string // POST
	Swap      string // POST
	PerpOpen  string // POST
	PerpClose string // POST
	Transfer  string // POST
}

// DefaultEndpoints are the paths of the wire contract in the package doc.
func DefaultEndpoints() Endpoints {
	return Endpoints{
		Price:     "/v1/prices",
		Portfolio: "/v1/portfolio",
		Simulate:  "/v1/tx/cross-chain/swaps-simulate",
		Swap:      "/v1/tx/swaps",
		PerpOpen:  "/v1/perps/open",
		PerpClose: "/v1/perps/close",
		Transfer:  "/v1/transfers",
	}
}

// endpoints are the resolved absolute URLs of each call.
type endpoints struct {
	price, portfolio, simulate, swap, perpOpen, perpClose, transfer string
}

// invalid is a configuration error. Its text never holds the token or the
// base URL's credentials or query.
func invalid(format string, args ...any) *warden.Error {
	return warden.Errorf(warden.EInvalid, "httpexchange: "+format, args...)
}

// parseBase validates the base URL and returns it without a trailing slash.
func parseBase(raw, token string) (*url.URL, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("the base URL is empty").WithHint("set it to the venue's API root, e.g. https://venue.example")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url's error quotes the whole URL, which may hold a secret.
		return nil, invalid("the base URL is not a valid URL")
	}
	switch {
	case u.User != nil:
		return nil, invalid("the base URL carries credentials (user:password@)").WithHint("give the venue's token as the bearer token instead")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, invalid("the base URL's scheme is %q; want http or https", clip.String(u.Scheme, 64))
	case u.Host == "" || u.Opaque != "":
		return nil, invalid("the base URL has no host; want an absolute URL such as https://venue.example")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, invalid("the base URL has a query or a fragment").WithHint("give the token as the bearer token, not in the URL")
	case u.Scheme == "http" && token != "" && !loopback(u.Hostname()):
		return nil, invalid("the base URL is plain http to %s, which would send the bearer token in clear text", u.Host).
			WithHint("use https, or http only to a venue on this machine (localhost)")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resolve joins each endpoint, or its default, to base.
func (e Endpoints) resolve(base *url.URL) (endpoints, error) {
	d := DefaultEndpoints()
	var out endpoints
	for _, f := range []struct {
		name      string
		path, def string
		dst       *string
	}{
		{"price", e.Price, d.Price, &out.price},
		{"portfolio", e.Portfolio, d.Portfolio, &out.portfolio},
		{"simulate", e.Simulate, d.Simulate, &out.simulate},
		{"swap", e.Swap, d.Swap, &out.swap},
		{"perp open", e.PerpOpen, d.PerpOpen, &out.perpOpen},
		{"perp close", e.PerpClose, d.PerpClose, &out.perpClose},
		{"transfer", e.Transfer, d.Transfer, &out.transfer},
	} {
		p := f.path
		if p == "" {
			p = f.def
		}
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
			return endpoints{}, invalid("the %s endpoint %q does not start with a single /", f.name, clip.String(p, 64))
		}
		if strings.ContainsAny(p, "?#\\") || strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return endpoints{}, invalid("the %s endpoint %q holds a query, a fragment, a backslash, a space or a control character", f.name, clip.String(p, 64))
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." || seg == "." {
				return endpoints{}, invalid("the %s endpoint %q holds a . or .. segment", f.name, clip.String(p, 64))
			}
		}
		u := *base
		u.Path = base.Path + p
		*f.dst = u.String()
	}
	return out, nil
}

// validToken reports whether tok can travel in a header: visible ASCII only.
func validToken(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if tok[i] < 0x21 || tok[i] > 0x7e {
			return false
		}
	}
	return true
}
