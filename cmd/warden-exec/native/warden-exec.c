/*
 * warden-exec, in C: the same client as cmd/warden-exec (read main.go
 * there first), built by `make build` when a C compiler is present,
 * because a C program starts in about half the time of a Go one and an
 * agent host starts warden-exec twice for every shell command (the hook,
 * then the command). It speaks internal/execwire's protocol and decides
 * nothing: the session's supervisor checks every request (user, home,
 * session, binary, payload) and answers "fallback" to anything it does
 * not serve, and then this program execs the warden binary, which
 * decides. Where this program cannot do what the Go one does exactly (a
 * string that is not UTF-8, a session id with escapes, a request too
 * large), it takes the warden binary's path, which is always right.
 *
 *	warden-exec WARDEN --home H exec [flags] -- CMD [ARG...]
 *	warden-exec WARDEN hook HOST [--home H]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

enum {
	wire_version = 1,          /* execwire.Version */
	max_request = 1 << 20,     /* execwire.MaxRequest */
	exit_hook_blocked = 2,     /* every host reads 2 as "blocked" */
};

/* ---- a growing buffer; out of memory ends in the warden binary's path ---- */

struct buf {
	char *p;
	size_t n, cap;
	int bad; /* too large, out of memory or not UTF-8: do not send */
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->bad)
		return;
	if (b->n + n > max_request) {
		b->bad = 1;
		return;
	}
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->bad = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/* utf8_ok reports whether s[0..n) is valid UTF-8 (Go's json would replace
 * what is not, and the supervisor would run other bytes than these). */
static int utf8_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t len;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07;
		} else {
			return 0;
		}
		if (i + len > n)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* str writes s as a JSON string. */
static void str(struct buf *b, const char *s)
{
	size_t n = strlen(s);
	if (!utf8_ok((const unsigned char *)s, n)) {
		b->bad = 1;
		return;
	}
	put(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		if (c == '"' || c == '\\') {
			esc[0] = '\\', esc[1] = (char)c;
			put(b, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			put(b, esc, 6);
		} else {
			put(b, (const char *)&s[i], 1);
		}
	}
	put(b, "\"", 1);
}

static void base64(struct buf *b, const unsigned char *s, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	put(b, "\"", 1);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
		char o[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=', i + 2 < n ? tab[v & 63] : '='};
		put(b, o, 4);
	}
	put(b, "\"", 1);
}

/* ---- what the Go client finds in its command line (execwire) ---- */

static const char *env_value(const char *name)
{
	const char *v = NULL; /* the last one wins, as in a shell */
	size_t n = strlen(name);
	for (char **e = environ; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			v = *e + n + 1;
	return v;
}

/* hook_target is execwire.HookTarget: the home of a `warden hook` command
 * line as `warden install` writes it (into *home, malloc'd), or 0. */
static int hook_target(int n, char **a, char **home)
{
	const char *h = NULL;
	if (n == 2 && strcmp(a[0], "hook") == 0) {
		const char *wh = env_value("WARDEN_HOME"), *uh;
		if (wh && *wh) {
			h = wh;
		} else if ((uh = env_value("HOME")) && *uh) {
			if (asprintf(home, "%s/.warden", uh) < 0)
				return 0;
			if ((*home)[0] != '/') {
				free(*home);
				return 0;
			}
			return 1;
		}
	} else if (n == 4 && strcmp(a[0], "hook") == 0 && strcmp(a[2], "--home") == 0) {
		h = a[3];
	} else if (n == 4 && strcmp(a[0], "--home") == 0 && strcmp(a[2], "hook") == 0) {
		h = a[1];
	}
	if (!h || h[0] != '/')
		return 0;
	return (*home = strdup(h)) != NULL;
}

/* exec_target is execwire.Target: the home and session of a `warden exec`
 * command line as a hook writes it, or 0. */
static int exec_target(int n, char **a, const char **home, const char **session)
{
	if (n < 4 || strcmp(a[0], "--home") != 0 || strcmp(a[2], "exec") != 0)
		return 0;
	*home = a[1];
	*session = NULL;
	for (int i = 3; i < n; i++) {
		if (strcmp(a[i], "--") == 0)
			return *session && **session && (*home)[0] == '/';
		if (strcmp(a[i], "--session") == 0 && i + 1 < n)
			*session = a[++i];
	}
	return 0;
}

/* json_string_after finds `"key"` followed by `:` and a string in the
 * payload and copies the string (without escapes: one with a backslash is
 * not taken) into out. It is not a JSON parser: the supervisor parses the
 * payload itself and refuses one whose session or event is not what this
 * found, and then the warden binary decides. */
static int json_string_after(const char *p, size_t n, const char *key, char *out, size_t outn)
{
	size_t kn = strlen(key);
	for (const char *s = p; (s = memmem(s, n - (size_t)(s - p), key, kn)) != NULL; s += kn) {
		const char *q = s + kn, *end = p + n;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
			q++;
		if (q >= end || *q != ':')
			continue;
		q++;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
			q++;
		if (q >= end || *q != '"')
			continue;
		q++;
		size_t i = 0;
		while (q < end && *q != '"') {
			if (*q == '\\' || i + 1 >= outn)
				return 0;
			out[i++] = *q++;
		}
		if (q >= end || i == 0)
			return 0;
		out[i] = 0;
		return 1;
	}
	return 0;
}

/* hook_session is execwire.HookSession, as far as a string search can
 * tell (see json_string_after). */
static int hook_session(const char *payload, size_t n, char *session, size_t sn)
{
	char event[32];
	if (!json_string_after(payload, n, "\"hook_event_name\"", event, sizeof event))
		return 0;
	if (strcmp(event, "PreToolUse") && strcmp(event, "PostToolUse") && strcmp(event, "PostToolUseFailure") && strcmp(event, "BeforeTool") && strcmp(event, "AfterTool"))
		return 0;
	return json_string_after(payload, n, "\"session_id\"", session, sn);
}

/* ---- execwire.SocketPath: HOME/run/exec-<FNV-1a 64 of the session>.sock ---- */

static int socket_path(const char *home, const char *session, char *out, size_t outn)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *s = (const unsigned char *)session; *s; s++) {
		h ^= *s;
		h *= 0x100000001b3ULL;
	}
	int n = snprintf(out, outn, "%s/run/exec-%016llx.sock", home, (unsigned long long)h);
	return n > 0 && (size_t)n < outn;
}

/* workdir is Go's os.Getwd: $PWD when it names the current directory
 * (the path the user took, through links), else the physical path. */
static int workdir(char *out, size_t outn)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;
	if (pwd && pwd[0] == '/' && strlen(pwd) < outn && stat(pwd, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		strcpy(out, pwd);
		return 1;
	}
	return getcwd(out, outn) != NULL;
}

/* ---- the call ---- */

static volatile sig_atomic_t conn_fd = -1;

static void on_signal(int sig)
{
	/* Hang up: the supervisor stops the command. */
	if (conn_fd >= 0)
		shutdown(conn_fd, SHUT_RDWR);
	_exit(128 + sig);
}

/* through_supervisor is the Go client's throughSupervisor: 1 with *status
 * when the supervisor ran the command line, 0 when nothing ran. */
static int through_supervisor(const char *warden, const char *home, const char *session, int n, char **args,
			      const unsigned char *payload, size_t payload_n, int *status)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (!socket_path(home, session, addr.sun_path, sizeof addr.sun_path))
		return 0;
	char dir[4096];
	if (!workdir(dir, sizeof dir))
		return 0;
	struct buf b = {0};
	char num[32];
	snprintf(num, sizeof num, "{\"v\":%d,\"warden\":", wire_version);
	puts_(&b, num);
	str(&b, warden);
	puts_(&b, ",\"args\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			put(&b, ",", 1);
		str(&b, args[i]);
	}
	puts_(&b, "],\"dir\":");
	str(&b, dir);
	puts_(&b, ",\"env\":[");
	for (char **e = environ; *e; e++) {
		if (e != environ)
			put(&b, ",", 1);
		str(&b, *e);
	}
	put(&b, "]", 1);
	if (payload) {
		puts_(&b, ",\"stdin\":");
		base64(&b, payload, payload_n);
	}
	put(&b, "}", 1);
	if (b.bad)
		return 0;

	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
		close(fd);
		return 0;
	}
	conn_fd = fd;
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);

	int fds[3] = {0, 1, 2};
	char cbuf[CMSG_SPACE(sizeof fds)];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {.iov_base = b.p, .iov_len = b.n};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(c), fds, sizeof fds);
	ssize_t sent;
	while ((sent = sendmsg(fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	free(b.p);
	if (sent < 0) { /* nothing was sent: the warden binary runs it */
		conn_fd = -1;
		close(fd);
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			signal(sigs[i], SIG_DFL);
		return 0;
	}

	char resp[4097];
	ssize_t r;
	while ((r = recv(fd, resp, sizeof resp - 1, 0)) < 0 && errno == EINTR)
		;
	shutdown(fd, SHUT_RDWR);
	close(fd);
	conn_fd = -1;
	int failed = payload ? exit_hook_blocked : 125;
	if (r <= 0) {
		fprintf(stderr, "warden: the session's supervisor went away while the command ran\n");
		*status = failed;
		return 1;
	}
	resp[r] = 0;
	/* {"fallback":"why"} or {"exit":N}: Response in execwire. */
	if (strstr(resp, "\"fallback\":\"") && !strstr(resp, "\"fallback\":\"\"")) {
		for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
			signal(sigs[i], SIG_DFL);
		return 0;
	}
	const char *e = strstr(resp, "\"exit\":");
	char *end;
	long v = e ? strtol(e + 7, &end, 10) : -1;
	if (!e || end == e + 7 || v < 0 || v > 255) {
		fprintf(stderr, "warden: the session's supervisor answered something unreadable\n");
		*status = failed;
		return 1;
	}
	*status = (int)v;
	return 1;
}

/* resolve is the Go client's resolve: a path as it is, a bare name looked
 * up on $PATH as a shell would (made absolute), or NULL. */
static char *resolve(const char *name)
{
	if (strchr(name, '/'))
		return strdup(name);
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char cwd[4096];
	while (1) {
		const char *colon = strchr(path, ':');
		size_t dn = colon ? (size_t)(colon - path) : strlen(path);
		char *cand;
		int ok;
		if (dn == 0)
			ok = asprintf(&cand, "%s", name);
		else
			ok = asprintf(&cand, "%.*s/%s", (int)dn, path, name);
		if (ok >= 0) {
			struct stat st;
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
				if (cand[0] == '/')
					return cand;
				char *abs;
				if (getcwd(cwd, sizeof cwd) && asprintf(&abs, "%s/%s", cwd, cand) >= 0) {
					free(cand);
					return abs;
				}
				return cand;
			}
			free(cand);
		}
		if (!colon)
			return NULL;
		path = colon + 1;
	}
}

/* replace_stdin makes payload this process's stdin, from its start, for
 * the warden it execs. */
static int replace_stdin(const unsigned char *payload, size_t n)
{
	int fd = memfd_create("warden-hook-payload", 0);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, payload + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || dup2(fd, 0) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: warden-exec WARDEN --home H exec [flags] -- CMD [ARG…]\n"
				"       warden-exec WARDEN hook HOST [--home H]\n(warden writes it; run warden yourself)\n");
		return 2;
	}
	char *warden = resolve(argv[1]);
	char **args = argv + 2;
	int n = argc - 2;
	char *home = NULL;
	int is_hook = hook_target(n, args, &home);
	/* A hook that cannot reach warden blocks the call. */
	int failed = 127;
	if (is_hook || strcmp(args[0], "hook") == 0 || (n > 2 && strcmp(args[2], "hook") == 0))
		failed = exit_hook_blocked;
	if (!warden) {
		fprintf(stderr, "warden-exec: %s is not on $PATH; install warden with `make install` or put its directory on $PATH\n", argv[1]);
		return failed;
	}
	int status;
	if (is_hook) {
		char *p = NULL;
		size_t pn = 0, pcap = 0;
		int read_err = 0;
		while (1) {
			if (pn == pcap) {
				pcap = pcap ? pcap * 2 : 65536;
				char *np = realloc(p, pcap);
				if (!np) {
					fprintf(stderr, "warden-exec: out of memory reading the hook's payload\n");
					return exit_hook_blocked;
				}
				p = np;
			}
			ssize_t r = read(0, p + pn, pcap - pn);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				read_err = 1;
			if (r <= 0)
				break;
			pn += (size_t)r;
		}
		char session[512];
		if (!read_err && pn <= max_request && hook_session(p, pn, session, sizeof session) &&
		    through_supervisor(warden, home, session, n, args, (const unsigned char *)p, pn, &status))
			return status;
		if (replace_stdin((const unsigned char *)p, pn) < 0) {
			fprintf(stderr, "warden-exec: cannot pass the hook's payload on to warden: %s\n", strerror(errno));
			return exit_hook_blocked;
		}
	} else {
		const char *h, *s;
		if (exec_target(n, args, &h, &s) && through_supervisor(warden, h, s, n, args, NULL, 0, &status))
			return status;
	}
	char **wargv = calloc((size_t)n + 2, sizeof *wargv);
	if (wargv) {
		wargv[0] = warden;
		memcpy(wargv + 1, args, (size_t)n * sizeof *wargv);
		execv(warden, wargv);
	}
	fprintf(stderr, "warden-exec: cannot start %s: %s\n", warden, strerror(errno));
	return failed == exit_hook_blocked ? failed : 126;
}
