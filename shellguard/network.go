package shellguard

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// One gate for the network: every destination a command names (a URL given
// to any program, the host of ssh, scp, rsync, nc, socat or telnet, a git
// remote written as a URL) is judged by Policy.Network, the policy the egress
// proxy applies to every connection. A destination only known at run time is
// left to the proxy, which judges the connection the command makes.

// network judges one destination: target is an absolute web URL (method is
// its HTTP method) or HOST:PORT (method "").
func (cc *cmdCtx) network(target, method string) {
	cc.netJudged = true
	shown := showTarget(target)
	if cc.c.p.Network == nil {
		cc.say(warden.Ask, "shell.network.no_policy", fmt.Sprintf("%s would connect to %s, and no network policy is available to judge it", cc.name, shown))
		return
	}
	d := cc.c.p.Network(target, method)
	if d.Rule == ruleOwnLoopback && !cc.c.p.SandboxAvailable {
		// A command the host runs itself (Cursor's) reaches the host's own
		// loopback, not a sandbox's: the policy's answer for a private
		// address stands.
		d = warden.Denyf("network.private_address", target+" is the host's loopback, and this command runs on the host, outside any sandbox")
	}
	cc.netTargets++
	if d.Verdict == warden.Allow && d.Rule == ruleOwnLoopback {
		cc.ownLoopback++
	}
	if d.Verdict == warden.Allow {
		if cc.c.env.Explain {
			cc.c.trace = append(cc.c.trace, "network "+shown+": allow ("+d.Rule+")")
		}
		return
	}
	rule := d.Rule
	if rule == "" {
		rule = "shell.network"
	}
	if d.Verdict == warden.Deny && rule == "network.not_allowed_here" && method == "" && sshTarget(target) {
		// ssh to a host the policy allows on other ports (git@github.com:
		// a push, a clone, ssh -T): it needs the user's keys, which only
		// the host has, so a human decides whether it runs there.
		cc.say(warden.Ask, "shell.network.ssh", fmt.Sprintf("%s would connect to %s over ssh, which needs your keys and runs only on the host: %s", cc.name, shown, d.Reason))
		return
	}
	cc.say(d.Verdict, rule, fmt.Sprintf("%s would connect to %s: %s", cc.name, shown, d.Reason))
}

// ruleOwnLoopback is the network rule of a loopback address where the
// command runs in a sandbox's network namespace of its own (Policy.Network
// answers it): what it sends there reaches only the session's own
// servers, which reach further only through the egress proxy.
const ruleOwnLoopback = "shell.network.sandbox_loopback"

// sshTarget reports whether target (HOST:PORT) is ssh's port.
func sshTarget(target string) bool {
	_, port, err := net.SplitHostPort(target)
	return err == nil && port == "22"
}

// networkAsk asks about a connection the guard cannot judge: rule and what
// say why.
func (cc *cmdCtx) networkAsk(rule, what string) {
	cc.netJudged = true
	cc.say(warden.Ask, rule, what)
}

// showTarget is a destination as a reason names it: a URL's scheme, host
// and port, without its path and query (which may carry tokens).
func showTarget(t string) string {
	i := strings.Index(t, "://")
	if i < 0 {
		return t
	}
	rest := t[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	if j := strings.LastIndexByte(rest, '@'); j >= 0 {
		rest = rest[j+1:]
	}
	return t[:i+3] + rest
}

// webSchemes are the URL schemes the network policy judges as requests.
var webSchemes = setOf("http", "https", "ws", "wss")

// schemePorts are the default ports of the other URL schemes that name a
// network destination; such a URL is judged as a connection to HOST:PORT.
var schemePorts = map[string]int{
	"ssh": 22, "sftp": 22, "scp": 22, "git": 9418, "rsync": 873, "ftp": 21, "ftps": 990, "telnet": 23,
	"gopher": 70, "dict": 2628, "ldap": 389, "ldaps": 636, "smtp": 25, "smtps": 465, "imap": 143,
	"imaps": 993, "pop3": 110, "pop3s": 995, "tftp": 69, "mqtt": 1883, "mqtts": 8883, "rtsp": 554,
	"smb": 445, "smbs": 445, "redis": 6379, "rediss": 6379, "postgres": 5432, "postgresql": 5432,
	"mysql": 3306, "mongodb": 27017, "amqp": 5672, "amqps": 5671, "nats": 4222, "kafka": 9092,
	"svn": 3690, "hg": 443,
}

// urlScheme returns the lower-case scheme of s when s starts with
// SCHEME://, a version-control prefix ("git+", "svn+", "hg+", "bzr+")
// removed.
func urlScheme(s string) (scheme, rest string, ok bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", "", false
	}
	scheme = strings.ToLower(s[:i])
	for j := 0; j < len(scheme); j++ {
		c := scheme[j]
		if !(c >= 'a' && c <= 'z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", "", false
		}
	}
	for _, p := range [...]string{"git+", "svn+", "hg+", "bzr+"} {
		scheme = strings.TrimPrefix(scheme, p)
	}
	return scheme, s[i+3:], true
}

// urlTarget reads s as a URL naming a network destination: a web URL is
// returned whole (with any version-control prefix removed), a URL of
// another network scheme as HOST:PORT. ok is false for anything else: a
// path, a word, file://, s3://, a scheme the guard does not know.
func urlTarget(s string) (target string, web, ok bool) {
	scheme, rest, ok := urlScheme(s)
	if !ok {
		return "", false, false
	}
	if webSchemes.has(scheme) {
		return scheme + "://" + rest, true, true
	}
	port, known := schemePorts[scheme]
	if !known {
		return "", false, false
	}
	auth := rest
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	t, ok := authority(auth, port)
	return t, false, ok
}

// authority returns HOST:PORT for an authority written [user@]host[:port]
// (IPv6 in brackets), with def as the port when it names none.
func authority(auth string, def int) (string, bool) {
	if j := strings.LastIndexByte(auth, '@'); j >= 0 {
		auth = auth[j+1:]
	}
	host, port := auth, ""
	if h, p, err := net.SplitHostPort(auth); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(auth, "[") && strings.HasSuffix(auth, "]") {
		host = auth[1 : len(auth)-1]
	}
	if host == "" || strings.ContainsAny(host, "/ \t") {
		return "", false
	}
	if port == "" {
		if def <= 0 {
			return "", false
		}
		port = strconv.Itoa(def)
	}
	return net.JoinHostPort(host, port), true
}

// scpHost returns the [user@]host of a remote operand written the scp way,
// [user@]host:path, and false for a local path ("./a:b", "/x:y") or a URL.
func scpHost(s string) (string, bool) {
	if strings.Contains(s, "://") || strings.HasPrefix(s, ":") {
		return "", false
	}
	if strings.HasPrefix(s, "[") || strings.Contains(s, "@[") {
		// [v6]:path, user@[v6]:path
		j := strings.Index(s, "]:")
		if j < 0 {
			return "", false
		}
		return s[:j+1], true
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || strings.Contains(s[:i], "/") {
		return "", false
	}
	h := s[:i]
	if len(h) == 1 {
		return "", false // a drive letter, not a host
	}
	return h, true
}

// knownURL returns the text of a word that is fully known, or the known
// prefix of one only known at run time when it holds a URL's whole
// authority (https://host/$X); ok is false when the destination is not
// known.
func knownURL(w walk.Word) (string, bool) {
	if !w.Dynamic {
		return w.Value, w.Value != ""
	}
	i := strings.Index(w.Prefix, "://")
	if i < 0 || !strings.ContainsAny(w.Prefix[i+3:], "/?#") {
		return "", false
	}
	return w.Prefix, true
}

// findURLs returns the URLs of the network schemes inside text (at most
// max): each from its scheme to the first space, quote or bracket.
func findURLs(text string, max int) []string {
	var out []string
	for off := 0; len(out) < max; {
		i := strings.Index(text[off:], "://")
		if i < 0 {
			break
		}
		i += off
		s := i
		for s > 0 && isSchemeByte(text[s-1]) {
			s--
		}
		e := i + 3
		for e < len(text) && !strings.ContainsRune(" \t\r\n'\"`<>()[]{}\\,;|", rune(text[e])) {
			e++
		}
		if s < i {
			if _, _, ok := urlTarget(text[s:e]); ok {
				out = append(out, text[s:e])
			}
		}
		off = e
	}
	return out
}

func isSchemeByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'
}

// judgeURL judges a URL a program was given.
func (cc *cmdCtx) judgeURL(u, method string) {
	t, web, ok := urlTarget(u)
	if !ok {
		return
	}
	if !web {
		method = ""
	} else if method == "" {
		method = "GET"
	}
	cc.network(t, method)
}

// urlData lists the programs whose arguments are data even when they look
// like URLs: they print, search or compare text and open no connection
// (git judges its own remotes; warden check only decides).
var urlData = func() *nameSet {
	var names []string
	for _, n := range strings.Fields(readOnlyPrograms + " " + dataPrograms) {
		if !strings.HasSuffix(n, "_") {
			names = append(names, n)
		}
	}
	names = append(names, contentReaders...)
	names = append(names, "git", "warden", "sed", "awk", "gawk", "mawk", "tee", "touch", "mkdir", "rm", "cp", "mv")
	return setOf(names...)
}()

// maxURLsPerWord bounds the URLs judged in one word.
const maxURLsPerWord = 8

// scanURLs judges the URLs among a command's arguments (and option values,
// --index-url=URL), for any program that did not judge its destinations
// itself and is not known to treat them as data.
func (cc *cmdCtx) scanURLs() {
	if cc.netJudged || urlData.has(cc.name) {
		return
	}
	code := -1 // a shell's -c code string: Walk reads it as commands, each judged
	if isShell(cc.name) && shellHasCode(cc.args) {
		code = slices.IndexFunc(cc.args, func(w walk.Word) bool { return !strings.HasPrefix(w.Value, "-") })
	}
	for i, w := range cc.args {
		if i == code {
			continue
		}
		s, ok := knownURL(w)
		if !ok || !strings.Contains(s, "://") {
			continue
		}
		for _, u := range findURLs(s, maxURLsPerWord) {
			cc.judgeURL(u, "")
		}
	}
}

// netClientGrammars are the option grammars of the HTTP clients: the
// options that take a value, so that it is not read as a URL.
var netClientGrammars = map[string]string{
	"curl": "o,output= O,remote-name d,data= data-raw= data-binary= data-urlencode= data-ascii= json= H,header= " +
		"X,request= u,user= A,user-agent= e,referer= b,cookie= c,cookie-jar= T,upload-file= F,form= form-string= " +
		"x,proxy= U,proxy-user= w,write-out= m,max-time= connect-timeout= r,range= E,cert= key= cacert= capath= " +
		"K,config= retry= retry-delay= retry-max-time= Y,speed-limit= y,speed-time= z,time-cond= limit-rate= " +
		"max-filesize= resolve= connect-to= interface= dns-servers= dns-interface= dns-ipv4-addr= dns-ipv6-addr= " +
		"doh-url= url= C,continue-at= D,dump-header= stderr= trace= trace-ascii= trace-config= oauth2-bearer= " +
		"Q,quote= local-port= unix-socket= abstract-unix-socket= noproxy= proxy-header= output-dir= " +
		"create-file-mode= expect100-timeout= happy-eyeballs-timeout-ms= keepalive-time= mail-from= mail-rcpt= " +
		"mail-auth= max-redirs= netrc-file= pinnedpubkey= preproxy= proto= proto-redir= proto-default= pubkey= " +
		"request-target= sasl-authzid= service-name= socks4= socks4a= socks5= socks5-hostname= " +
		"socks5-gssapi-service= proxy1.0= tls-max= tlsuser= tlspassword= ciphers= tls13-ciphers= curves= " +
		"engine= hostpubmd5= hostpubsha256= variable= t,telnet-option= P,ftp-port= ftp-account= ftp-method= " +
		"ftp-alternative-to-user= krb= cert-type= key-type= pass= delegation= parallel-max= rate= login-options= " +
		"aws-sigv4= proxy-cacert= proxy-capath= proxy-cert= proxy-key= proxy-pass= proxy-ciphers= " +
		"proxy-cert-type= proxy-key-type= proxy-tlsuser= proxy-tlspassword= proxy-service-name= " +
		"proxy-pinnedpubkey= crlfile= egd-file= random-file= ftp-ssl-ccc-mode= etag-save= etag-compare= " +
		"haproxy-clientip= ip-tos= vlan-priority= " +
		"G,get I,head g,globoff q,disable s,silent S,show-error L,location f,fail k,insecure v,verbose i,include " +
		"4,ipv4 6,ipv6 #,progress-bar N,no-buffer n,netrc Z,parallel J,remote-header-name R,remote-time " +
		"j,junk-session-cookies l,list-only a,append B,use-ascii compressed fail-with-body http1.1 http2 http3 " +
		"no-progress-meter",
	"wget": "O,output-document= o,output-file= a,append-output= P,directory-prefix= U,user-agent= e,execute= " +
		"t,tries= T,timeout= w,wait= i,input-file= B,base= Q,quota= l,level= A,accept= R,reject= D,domains= " +
		"X,exclude-directories= I,include-directories= header= post-data= post-file= body-data= body-file= " +
		"method= user= password= http-user= http-password= ftp-user= ftp-password= proxy-user= proxy-password= " +
		"referer= load-cookies= save-cookies= limit-rate= bind-address= ca-certificate= ca-directory= " +
		"certificate= private-key= certificate-type= private-key-type= dns-timeout= connect-timeout= " +
		"read-timeout= waitretry= restrict-file-names= exclude-domains= accept-regex= reject-regex= regex-type= " +
		"default-page= cut-dirs= progress= local-encoding= remote-encoding= secure-protocol= ciphers= crl-file= " +
		"pinnedpubkey= report-speed= config= rejected-log= use-askpass= max-redirect= backups= hsts-file= " +
		"warc-file= warc-header= warc-max-size= warc-dedup= warc-tempdir= follow-tags= ignore-tags= " +
		"retry-on-http-error= q,quiet v,verbose c,continue N,timestamping r,recursive m,mirror p,page-requisites " +
		"k,convert-links S,server-response spider 4,inet4-only 6,inet6-only",
	"http": "a,auth= A,auth-type= o,output= session= session-read-only= verify= cert= cert-key= cert-key-pass= " +
		"proxy= timeout= max-redirects= s,style= p,print= P,history-print= pretty= format-options= default-scheme= " +
		"boundary= max-headers= response-charset= response-mime= ssl= ciphers= b,body h,headers v,verbose " +
		"f,form j,json d,download c,continue F,follow q,quiet offline check-status",
}

// hNetClient: curl, wget and the httpie family fetch the URLs they are
// given, through the network policy; uploads of secret files are sinks.
func hNetClient(cc *cmdCtx) {
	cc.netJudged = true
	for _, f := range netOutputFiles(cc.cmd) {
		cc.effect(EffWrite, walk.Word{Value: f})
	}
	// Uploads of secret files: -T FILE, -d @FILE, -F name=@FILE, --post-file.
	for i, a := range cc.args {
		v := a.Value
		var file string
		switch {
		case (v == "-T" || v == "--upload-file" || v == "--post-file" || v == "--body-file") && i+1 < len(cc.args):
			file = cc.args[i+1].Value
		case strings.HasPrefix(v, "--post-file=") || strings.HasPrefix(v, "--body-file="):
			_, file, _ = strings.Cut(v, "=")
		case strings.HasPrefix(v, "@") && len(v) > 1 && v != "@-":
			file = v[1:]
		case strings.Contains(v, "=@") && !strings.HasSuffix(v, "=@-"):
			_, file, _ = strings.Cut(v, "=@")
			file, _, _ = strings.Cut(file, ";")
		}
		if file != "" && cc.zone(walk.Word{Value: file}) == ZoneHomeSensitive {
			cc.say(warden.Deny, "shell.exfiltration", cc.name+" would upload the secret file "+file).destructive = true
		}
	}
	for _, a := range cc.args {
		if h := urlHost(a.Value); h != "" && !isASCII(h) {
			cc.say(warden.Ask, "shell.net.homograph", "the URL host has non-ASCII characters, a homograph of another host")
		}
	}
	switch cc.name {
	case "curl":
		curlTargets(cc)
	case "wget":
		wgetTargets(cc)
	default:
		httpieTargets(cc)
	}
}

// fetchOperand judges one URL an HTTP client fetches; scheme is the one it
// assumes for a URL written without one.
func (cc *cmdCtx) fetchOperand(w walk.Word, scheme, method string) {
	s, ok := knownURL(w)
	if !ok {
		return // only known at run time: the egress proxy judges the connection
	}
	if sch, rest, ok := urlScheme(s); ok {
		if sch == "file" {
			cc.fileURL(rest)
			return
		}
		if t, web, ok := urlTarget(s); ok {
			if !web {
				method = ""
			}
			cc.network(t, method)
			return
		}
		// A scheme the network policy does not know: it refuses it, naming it.
		cc.network(s, method)
		return
	}
	cc.network(scheme+"://"+s, method)
}

// fileURL judges file://[host]/path as a read of the path.
func (cc *cmdCtx) fileURL(rest string) {
	p := rest
	if i := strings.IndexByte(p, '/'); i > 0 {
		p = p[i:] // file://host/path
	}
	if j := strings.IndexAny(p, "?#"); j >= 0 {
		p = p[:j]
	}
	w := walk.Word{Value: p}
	if cc.deniedPath(w, "read") {
		return
	}
	if cc.zone(w) == ZoneHomeSensitive {
		cc.c.markSecretRead(cc.cmd)
	}
}

func curlTargets(cc *cmdCtx) {
	p := parseArgs(gram("curl"), cc.args, false)
	method := "GET"
	switch {
	case p.has("request"):
		method = strings.ToUpper(p.value("request"))
	case p.has("get"):
	case p.has("data", "data-raw", "data-binary", "data-urlencode", "data-ascii", "json", "form", "form-string"):
		method = "POST"
	case p.has("upload-file"):
		method = "PUT"
	case p.has("head"):
		method = "HEAD"
	}
	for _, k := range [...]string{"unix-socket", "abstract-unix-socket"} {
		if v := p.flags[k]; len(v) > 0 {
			// The URL's host is only a header: the connection is the socket.
			cc.networkAsk("shell.network.unix_socket", fmt.Sprintf("curl would talk to the local service behind the socket %s (Docker's, a database's…), which no network rule covers", v[0]))
			return
		}
	}
	for _, w := range p.operands {
		cc.fetchOperand(w, "http", method)
	}
	for _, u := range p.flags["url"] {
		cc.fetchOperand(walk.Word{Value: u}, "http", method)
	}
	for _, u := range p.flags["doh-url"] {
		cc.fetchOperand(walk.Word{Value: u}, "https", "POST")
	}
	for _, k := range [...]string{"proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname", "proxy1.0"} {
		for _, v := range p.flags[k] {
			cc.proxyTarget(v, 1080)
		}
	}
	for _, v := range p.flags["resolve"] {
		// [+]HOST:PORT:ADDR[,ADDR]…: connections to HOST:PORT go to ADDR.
		parts := splitHostList(strings.TrimPrefix(v, "+"))
		if len(parts) >= 3 {
			for _, a := range strings.Split(strings.Join(parts[2:], ":"), ",") {
				if a = strings.Trim(a, "[]"); a != "" && a != "*" {
					cc.network(net.JoinHostPort(a, parts[1]), "")
				}
			}
		}
	}
	for _, v := range p.flags["connect-to"] {
		// HOST1:PORT1:HOST2:PORT2: connections to HOST1:PORT1 go to HOST2:PORT2.
		if parts := splitHostList(v); len(parts) == 4 && parts[2] != "" && parts[3] != "" {
			cc.network(net.JoinHostPort(strings.Trim(parts[2], "[]"), parts[3]), "")
		}
	}
	if v := p.flags["config"]; len(v) > 0 {
		cc.networkAsk("shell.network.hidden_target", fmt.Sprintf("curl reads further options and URLs from %s, which the guard cannot see", v[0]))
	}
}

func wgetTargets(cc *cmdCtx) {
	p := parseArgs(gram("wget"), cc.args, false)
	method := "GET"
	if m := p.value("method"); m != "" {
		method = strings.ToUpper(m)
	} else if p.has("post-data", "post-file", "body-data", "body-file") {
		method = "POST"
	}
	for _, w := range p.operands {
		cc.fetchOperand(w, "http", method)
	}
	for _, k := range [...]string{"input-file", "config"} {
		if v := p.flags[k]; len(v) > 0 {
			cc.networkAsk("shell.network.hidden_target", fmt.Sprintf("wget reads URLs or settings from %s, which the guard cannot see", v[0]))
		}
	}
}

// httpMethods are the methods httpie takes before its URL.
var httpMethods = setOf("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "QUERY")

// httpieTargets: http, https, xh and xhs take [METHOD] URL [ITEM…]; a URL
// written ":3000/x" means localhost.
func httpieTargets(cc *cmdCtx) {
	p := parseArgs(gram("http"), cc.args, true)
	ops := p.operands
	method := ""
	if len(ops) > 1 && !ops[0].Dynamic && httpMethods.has(ops[0].Value) {
		method, ops = ops[0].Value, ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	if method == "" {
		method = "GET"
		for _, it := range ops[1:] {
			if v := it.Value; strings.Contains(v, "=") && !strings.Contains(v, "==") || strings.Contains(v, "@") {
				method = "POST"
			}
		}
	}
	scheme := "http"
	if cc.name == "https" || cc.name == "xhs" {
		scheme = "https"
	}
	u := ops[0]
	if !u.Dynamic && strings.HasPrefix(u.Value, ":") {
		u.Value = "localhost" + u.Value
	}
	cc.fetchOperand(u, scheme, method)
	if v := p.value("proxy"); v != "" {
		_, pu, _ := strings.Cut(v, ":") // PROTOCOL:URL
		cc.proxyTarget(pu, 8080)
	}
}

// proxyVars are the environment variables that name the proxy a program's
// connections go through (curl, git, pip, Go, Node with
// NODE_USE_ENV_PROXY; npm's own), by lower-case name.
var proxyVars = map[string]bool{"http_proxy": true, "https_proxy": true, "all_proxy": true, "ftp_proxy": true,
	"npm_config_proxy": true, "npm_config_https_proxy": true, "yarn_proxy": true, "yarn_https_proxy": true, "pip_proxy": true}

// proxyAssigns judges the proxies a line names in the environment
// (ALL_PROXY=socks5h://host:port cmd, export https_proxy=…) as curl -x's:
// one gate for the network, whichever way a program is told where to
// connect. (In the sandbox only warden's proxy is reachable; this says
// so before the command runs, as for any host it names.)
func (cc *cmdCtx) proxyAssigns() {
	judge := func(name string, v walk.Word) {
		if !proxyVars[strings.ToLower(name)] || v.Dynamic || v.Value == "" {
			return
		}
		cc.proxyTarget(v.Value, 1080)
	}
	for _, a := range cc.cmd.Assigns {
		judge(a.Name, a.Value)
	}
	switch cc.name {
	case "export", "declare", "typeset", "readonly", "local", "env":
		for _, w := range cc.args {
			if name, value, ok := strings.Cut(w.Value, "="); ok && !w.Dynamic {
				judge(name, walk.Word{Value: value})
			}
		}
	}
}

// proxyTarget judges a proxy given as [scheme://][user@]host[:port].
func (cc *cmdCtx) proxyTarget(v string, def int) {
	auth := v
	if _, rest, ok := urlScheme(v); ok {
		auth = rest
	}
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	if t, ok := authority(auth, def); ok {
		cc.network(t, "")
	}
}

// splitHostList splits a colon-separated list whose fields may be IPv6
// addresses in brackets.
func splitHostList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// remoteHost judges a host a remote-login tool connects to.
func (cc *cmdCtx) remoteHost(userHost string, port int) {
	if t, ok := authority(userHost, port); ok {
		cc.network(t, "")
	}
}

// leaves asks about a command whose effect leaves this machine or the
// project: it pushes, publishes, deploys, logs in elsewhere, or acts
// through a daemon outside the sandbox.
func (cc *cmdCtx) leaves(what string) {
	cc.say(warden.Ask, "shell.leaves_machine", what)
}

// needsHost asks about a command that only reads but needs what the
// sandbox withholds (a daemon's socket, credentials it masks): run in the
// sandbox it could only fail, so a human decides, and may run it on the
// host.
func (cc *cmdCtx) needsHost(what string) {
	cc.say(warden.Ask, "shell.needs_host", what+"; a human may run it on the host")
}

// sshGrammar holds ssh's options that take a value.
const sshGrammar = "B= b= c= D= E= e= F= I= i= J= L= l= m= O= o= P= p= Q= R= S= W= w= G V"

// hSSH: ssh connects to its destination (and jump hosts), through the
// network policy, and opens a session on another machine, which a human
// approves. Walk classifies the remote command.
func hSSH(cc *cmdCtx) {
	cc.netJudged = true
	p := parseArgs(compileGrammar(sshGrammar), cc.args, true)
	if p.has("G", "V") || len(p.operands) == 0 && p.has("Q") {
		return // prints its configuration or version
	}
	port := 22
	if v := p.value("p"); v != "" {
		port = atoiOr(v, 22)
	}
	for _, o := range p.flags["o"] {
		k, v, _ := strings.Cut(strings.Replace(o, " ", "=", 1), "=")
		switch strings.ToLower(k) {
		case "port":
			port = atoiOr(v, port)
		case "proxyjump":
			jumpHosts(cc, v)
		case "proxycommand", "localcommand", "remotecommand", "knownhostscommand":
			cc.subShell(v)
		}
	}
	for _, j := range p.flags["J"] {
		jumpHosts(cc, j)
	}
	for _, w := range p.flags["W"] {
		if parts := splitHostList(w); len(parts) == 2 {
			cc.network(net.JoinHostPort(strings.Trim(parts[0], "[]"), parts[1]), "")
		}
	}
	if len(p.operands) == 0 {
		return
	}
	dest := p.operands[0]
	where := "another machine"
	if !dest.Dynamic {
		d := dest.Value
		if _, rest, ok := urlScheme(d); ok {
			d = strings.TrimSuffix(rest, "/")
			if t, ok := authority(d, port); ok {
				cc.network(t, "")
			}
		} else {
			cc.remoteHost(d, port)
		}
		where = d
	}
	cc.leaves(fmt.Sprintf("%s opens a session on %s", cc.name, where))
}

// jumpHosts judges ssh -J / ProxyJump: [user@]host[:port],…
func jumpHosts(cc *cmdCtx, list string) {
	if strings.EqualFold(list, "none") {
		return
	}
	for _, h := range strings.Split(list, ",") {
		if _, rest, ok := urlScheme(h); ok {
			h = rest
		}
		cc.remoteHost(h, 22)
	}
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 || n > 65535 {
		return def
	}
	return n
}

// hSCP: scp and sftp copy to or from other machines: each remote operand
// is judged by the network policy, the copy is asked about, and a secret
// file sent away is denied.
func hSCP(cc *cmdCtx) {
	cc.netJudged = true
	g := "c= D= F= i= J= l= o= P= S= X= 3 4 6 A B C O p q R r T v" // scp
	if cc.name == "sftp" {
		g = "B= b= c= D= F= i= J= l= o= P= R= S= s= X= 4 6 A a C f N p q r v"
	}
	p := parseArgs(compileGrammar(g), cc.args, false)
	port := atoiOr(p.value("P"), 22)
	for _, j := range p.flags["J"] {
		jumpHosts(cc, j)
	}
	for _, o := range p.flags["o"] {
		k, v, _ := strings.Cut(strings.Replace(o, " ", "=", 1), "=")
		switch strings.ToLower(k) {
		case "port":
			port = atoiOr(v, port)
		case "proxyjump":
			jumpHosts(cc, v)
		case "proxycommand", "localcommand":
			cc.subShell(v)
		}
	}
	if s := p.value("S"); s != "" {
		cc.subShell(s)
	}
	ops := p.operands
	remote := false
	for _, w := range ops {
		if w.Dynamic {
			continue
		}
		if _, rest, ok := urlScheme(w.Value); ok {
			auth := rest
			if j := strings.IndexAny(auth, "/?#"); j >= 0 {
				auth = auth[:j]
			}
			if t, ok := authority(auth, port); ok {
				cc.network(t, "")
				remote = true
			}
			continue
		}
		if cc.name == "sftp" {
			h := w.Value
			if hh, ok := scpHost(h); ok {
				h = hh
			}
			cc.remoteHost(h, port)
			remote = true
			break
		}
		if h, ok := scpHost(w.Value); ok {
			cc.remoteHost(h, port)
			remote = true
		}
	}
	if remote || cc.name == "sftp" {
		cc.leaves(cc.name + " copies files to or from another machine")
	}
	n := len(ops)
	if cc.name != "scp" || n == 0 {
		return
	}
	if _, ok := scpHost(ops[n-1].Value); !ok && !strings.Contains(ops[n-1].Value, "://") {
		cc.effect(EffWrite, ops[n-1])
		return
	}
	for _, a := range ops[:n-1] {
		if cc.zone(a) == ZoneHomeSensitive {
			cc.say(warden.Deny, "shell.exfiltration", "scp would copy the secret file "+a.Value+" to another host").destructive = true
		}
	}
}

// rsyncRemotes judges rsync's remote operands: rsync://host[:port]/…,
// host::module (the rsync daemon) and host:path (over ssh, or the program
// -e names, which is classified as a command). It reports whether any was
// remote.
func rsyncRemotes(cc *cmdCtx, p parsed) bool {
	cc.netJudged = true
	sshPort := 22
	if e := p.value("rsh"); e != "" {
		cc.subShell(e)
		f := strings.Fields(e)
		for i, x := range f {
			if x == "-p" && i+1 < len(f) {
				sshPort = atoiOr(f[i+1], 22)
			}
		}
	}
	daemonPort := atoiOr(p.value("port"), 873)
	remote := false
	for _, w := range p.operands {
		if w.Dynamic {
			continue
		}
		v := w.Value
		if sch, rest, ok := urlScheme(v); ok {
			if sch == "rsync" {
				auth := rest
				if j := strings.IndexByte(auth, '/'); j >= 0 {
					auth = auth[:j]
				}
				if t, ok := authority(auth, daemonPort); ok {
					cc.network(t, "")
					remote = true
				}
			}
			continue
		}
		if h, _, ok := strings.Cut(v, "::"); ok && h != "" && !strings.Contains(h, "/") {
			cc.remoteHost(h, daemonPort)
			remote = true
			continue
		}
		if h, ok := scpHost(v); ok {
			cc.remoteHost(h, sshPort)
			remote = true
		}
	}
	if remote {
		cc.leaves("rsync copies files to or from another machine")
	}
	return remote
}

// ncGrammar holds the options of nc, ncat and netcat that take a value
// (the union of the OpenBSD, GNU and nmap variants).
const ncGrammar = "I= i= M= m= O= P= p= q= s= T= V= w= X= x= d= g= G= o= e= c= " +
	"proxy= proxy-type= proxy-auth= proxy-dns= sh-exec= lua-exec= exec= output= hex-dump= source-port= source= " +
	"wait= idle-timeout= delay= max-conns= allow= allowfile= deny= denyfile= ssl-cert= ssl-key= ssl-trustfile= " +
	"ssl-ciphers= ssl-servername= ssl-alpn= l,listen U,unixsock u,udp z k,keep-open v,verbose n N C t 4 6 " +
	"broker chat ssl no-shutdown recv-only send-only"

// hNetcat: nc, ncat and netcat connect to HOST PORT through the network
// policy; one given a shell to run is a reverse shell; one that listens
// waits for connections inside the sandbox.
func hNetcat(cc *cmdCtx) {
	cc.netJudged = true
	p := parseArgs(compileGrammar(ncGrammar), cc.args, false)
	if p.has("e", "c", "sh-exec", "lua-exec", "exec") {
		cc.say(warden.Deny, "shell.reverse_shell", cc.name+" would connect a shell to the network").destructive = true
		return
	}
	for _, k := range [...]string{"x", "proxy"} {
		if v := p.value(k); v != "" && (k == "proxy" || !strings.HasPrefix(cc.name, "ncat")) {
			cc.proxyTarget(v, 1080)
		}
	}
	if p.has("unixsock") && !p.has("listen") {
		cc.networkAsk("shell.network.unix_socket", cc.name+" would talk to a local service through a socket, which no network rule covers")
		return
	}
	if p.has("listen") {
		cc.unseen("shell.network.listen", cc.name+" listens for network connections")
		return
	}
	ops := p.operands
	if len(ops) == 0 || ops[0].Dynamic {
		cc.networkAsk("shell.network.target_unknown", cc.name+" connects to a host the guard cannot read")
		return
	}
	host := strings.Trim(ops[0].Value, "[]")
	if len(ops) < 2 {
		cc.networkAsk("shell.network.target_unknown", cc.name+" connects to "+host+" on a port the guard cannot read")
		return
	}
	ports := ops[1:]
	first, _, isRange := strings.Cut(ports[0].Value, "-")
	if ports[0].Dynamic || atoiOr(first, 0) == 0 {
		cc.networkAsk("shell.network.target_unknown", cc.name+" connects to "+host+" on a port the guard cannot read")
		return
	}
	cc.network(net.JoinHostPort(host, first), "")
	if isRange || len(ports) > 1 {
		cc.networkAsk("shell.network.port_scan", cc.name+" would try several ports of "+host+", the shape of a port scan")
	}
}

// hSocat: each socat address that connects (TCP:host:port, OPENSSL:…,
// UDP:…, through SOCKS or a proxy) is judged by the network policy; one
// that runs a program is a reverse shell; one that listens waits inside the
// sandbox.
func hSocat(cc *cmdCtx) {
	cc.netJudged = true
	for _, a := range cc.args {
		v := a.Value
		if strings.HasPrefix(v, "-") && v != "-" {
			continue
		}
		if a.Dynamic {
			cc.networkAsk("shell.network.target_unknown", "socat is given an address only known at run time")
			continue
		}
		typ, params, _ := strings.Cut(v, ":")
		typ = strings.ToUpper(typ)
		params, _, _ = strings.Cut(params, ",") // the address's options
		switch {
		case typ == "EXEC" || typ == "SYSTEM":
			cc.say(warden.Deny, "shell.reverse_shell", "socat would connect a program to the network").destructive = true
			return
		case strings.Contains(typ, "LISTEN") || strings.Contains(typ, "RECV"):
			cc.unseen("shell.network.listen", "socat listens for network connections")
		case strings.HasPrefix(typ, "TCP") || strings.HasPrefix(typ, "UDP") || strings.HasPrefix(typ, "SCTP") ||
			strings.HasPrefix(typ, "DCCP") || strings.HasPrefix(typ, "OPENSSL") || typ == "SSL":
			if parts := splitHostList(params); len(parts) == 2 && atoiOr(parts[1], 0) > 0 {
				cc.network(net.JoinHostPort(strings.Trim(parts[0], "[]"), parts[1]), "")
			} else {
				cc.networkAsk("shell.network.target_unknown", "socat connects to "+params+", which the guard cannot read as HOST:PORT")
			}
		case strings.HasPrefix(typ, "SOCKS") || strings.HasPrefix(typ, "PROXY"):
			parts := splitHostList(params)
			if len(parts) == 3 && atoiOr(parts[2], 0) > 0 {
				def := 1080
				if strings.HasPrefix(typ, "PROXY") {
					def = 8080
				}
				cc.remoteHost(parts[0], def)
				cc.network(net.JoinHostPort(strings.Trim(parts[1], "[]"), parts[2]), "")
			} else {
				cc.networkAsk("shell.network.target_unknown", "socat connects through "+typ+" to a destination the guard cannot read")
			}
		case strings.HasPrefix(typ, "UNIX") || strings.HasPrefix(typ, "ABSTRACT"):
			cc.networkAsk("shell.network.unix_socket", "socat would talk to a local service through a socket, which no network rule covers")
		}
	}
}

// hTelnet: telnet HOST [PORT] connects through the network policy.
func hTelnet(cc *cmdCtx) {
	cc.netJudged = true
	p := parseArgs(compileGrammar("b= e= l= n= S= X= 4 6 8 E F f K L a c d r x"), cc.args, false)
	ops := p.operands
	if len(ops) == 0 {
		return
	}
	if ops[0].Dynamic {
		cc.networkAsk("shell.network.target_unknown", "telnet connects to a host the guard cannot read")
		return
	}
	port := 23
	if len(ops) > 1 {
		port = atoiOr(ops[1].Value, 0)
		if port == 0 {
			cc.networkAsk("shell.network.target_unknown", "telnet connects on a port the guard cannot read")
			return
		}
	}
	cc.remoteHost(ops[0].Value, port)
}

// hFTP: ftp, lftp and tftp connect to a host (or URL) and move files to or
// from it.
func hFTP(cc *cmdCtx) {
	cc.netJudged = true
	ops := operands(cc.args)
	def := 21
	if cc.name == "tftp" {
		def = 69
	}
	if len(ops) > 0 && !ops[0].Dynamic {
		v := ops[0].Value
		if t, web, ok := urlTarget(v); ok {
			m := ""
			if web {
				m = "GET"
			}
			cc.network(t, m)
		} else {
			port := def
			if len(ops) > 1 {
				port = atoiOr(ops[1].Value, def)
			}
			cc.remoteHost(v, port)
		}
	}
	cc.leaves(cc.name + " moves files to or from another machine")
}

// hOpenSSL: openssl s_client (and s_time) connect to -connect HOST:PORT
// (or -host and -port, or a HOST:PORT operand; localhost:4433 by default),
// through the network policy; -out writes its file; engines and providers
// load code the guard cannot see.
func hOpenSSL(cc *cmdCtx) {
	cc.netJudged = true
	sub := firstOperand(cc)
	host, port, connect, proxy := "", "", "", ""
	for i, a := range cc.args {
		v := a.Value
		next := ""
		if i+1 < len(cc.args) {
			next = cc.args[i+1].Value
		}
		switch v {
		case "-out":
			if i+1 < len(cc.args) {
				cc.effect(EffWrite, cc.args[i+1])
			}
		case "-connect":
			connect = next
		case "-host":
			host = next
		case "-port":
			port = next
		case "-proxy":
			proxy = next
		case "engine", "-engine", "-provider", "-provider-path", "-pre", "-load_certs_engine":
			cc.unseen("shell.script_file", "openssl loads an engine or provider, code the guard cannot see")
		}
	}
	if sub != "s_client" && sub != "s_time" {
		return
	}
	if connect == "" {
		if ops := operandValues(cc.args); len(ops) > 1 && strings.Contains(ops[1], ":") {
			connect = ops[1]
		}
	}
	switch {
	case connect != "":
	case host != "":
		connect = net.JoinHostPort(host, cmp.Or(port, "4433"))
	default:
		connect = "localhost:4433"
	}
	if t, ok := authority(connect, 443); ok {
		cc.network(t, "")
	}
	if proxy != "" {
		cc.proxyTarget(proxy, 8080)
	}
}

func networkHandlers(t map[string]handler) {
	t["openssl"] = hOpenSSL
	for _, n := range []string{"curl", "wget", "http", "https", "xh", "xhs"} {
		t[n] = hNetClient
	}
	for name, src := range netClientGrammars {
		grammarSrc[name] = src
	}
	for _, n := range []string{"nc", "ncat", "netcat"} {
		t[n] = hNetcat
	}
	t["socat"] = hSocat
	t["telnet"] = hTelnet
	t["ssh"] = hSSH
	t["scp"] = hSCP
	t["sftp"] = hSCP
	for _, n := range []string{"ftp", "lftp", "tftp"} {
		t[n] = hFTP
	}
}
