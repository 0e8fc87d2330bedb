package redact

import "strings"

// An argRule is an option through which a command takes a password or a
// token that nothing else marks as one: mysql -pPASS, sshpass -p PASS,
// curl -u user:PASS.
type argRule struct {
	flag string
	// glued: the value may follow the flag in the same word (-pPASS,
	// --user=alice:PASS when flag ends in '=').
	glued bool
	// apart: the value may be the next word.
	apart bool
	// optional: the option may stand alone (it prompts, or prints), so a
	// next word that starts with '-' is an option, not the value.
	optional bool
	// after, when set, masks only what follows its first occurrence in the
	// value: the password of user:PASS or user%PASS, the secret of
	// pass:SECRET. A value without it holds no secret.
	after string
}

// Rules shared by several commands.
var (
	mysqlRules  = []argRule{{flag: "-p", glued: true}}
	archiveP    = []argRule{{flag: "-p", glued: true}}
	loginRules  = []argRule{{flag: "-p", apart: true}}
	ldapRules   = []argRule{{flag: "-w", apart: true}}
	mongoRules  = []argRule{{flag: "-p", apart: true, optional: true}}
	userColon   = []argRule{{flag: "-u", glued: true, apart: true, after: ":"}, {flag: "--user", apart: true, after: ":"}, {flag: "--user=", glued: true, after: ":"}, {flag: "-U", glued: true, apart: true, after: ":"}, {flag: "--proxy-user", apart: true, after: ":"}, {flag: "--proxy-user=", glued: true, after: ":"}}
	httpieRules = []argRule{{flag: "-a", glued: true, apart: true, after: ":"}, {flag: "--auth", apart: true, after: ":"}, {flag: "--auth=", glued: true, after: ":"}}
)

// commandRules maps a command's name to its secret-taking options. MySQL's
// -p takes its password only glued: a lone -p prompts, and the next word is
// the database, which stays readable.
var commandRules = map[string][]argRule{
	"mysql": mysqlRules, "mysqldump": mysqlRules, "mysqladmin": mysqlRules, "mysqlimport": mysqlRules,
	"mysqlcheck": mysqlRules, "mysqlshow": mysqlRules, "mysqlpump": mysqlRules, "mysqlbinlog": mysqlRules,
	"mysqlsh": mysqlRules, "mariadb": mysqlRules, "mariadb-dump": mysqlRules, "mariadb-admin": mysqlRules,
	"mariadb-check": mysqlRules, "mariadb-import": mysqlRules,
	"sshpass": {{flag: "-p", glued: true, apart: true}},
	"curl":    userColon,
	"http":    httpieRules, "https": httpieRules, "xh": httpieRules, "xhs": httpieRules,
	"7z": archiveP, "7za": archiveP, "7zz": archiveP, "7zr": archiveP, "rar": archiveP, "unrar": archiveP,
	"zip": {{flag: "-P", apart: true}}, "unzip": {{flag: "-P", apart: true}}, "zipcloak": {{flag: "-P", apart: true}},
	"redis-cli": {{flag: "-a", apart: true}},
	"mongo":     mongoRules, "mongosh": mongoRules, "mongodump": mongoRules, "mongorestore": mongoRules,
	"mongoexport": mongoRules, "mongoimport": mongoRules, "mongostat": mongoRules, "mongotop": mongoRules,
	"openssl": {{flag: "-passin", apart: true, after: "pass:"}, {flag: "-passout", apart: true, after: "pass:"},
		{flag: "-pass", apart: true, after: "pass:"}, {flag: "-k", apart: true}},
	"smbclient":  {{flag: "-U", glued: true, apart: true, after: "%"}, {flag: "--user", apart: true, after: "%"}, {flag: "--user=", glued: true, after: "%"}},
	"ldapsearch": ldapRules, "ldapadd": ldapRules, "ldapmodify": ldapRules, "ldapdelete": ldapRules,
	"ldapwhoami": ldapRules, "ldappasswd": ldapRules, "ldapcompare": ldapRules, "ldapmodrdn": ldapRules,
	"security": {{flag: "-w", apart: true, optional: true}},
}

// loginCommands take a registry password through -p in their login
// subcommand only: docker run -p 8080:80 publishes a port.
var loginCommands = map[string]bool{
	"docker": true, "podman": true, "nerdctl": true, "buildah": true, "skopeo": true,
	"helm": true, "oras": true, "crane": true, "regctl": true, "finch": true,
}

// setterVerbs start a key and its value given as two words: aws configure
// set aws_secret_access_key KEY, git config github.token TOKEN, set -gx
// API_KEY KEY.
var setterVerbs = map[string]bool{
	"set": true, "config": true, "configure": true, "setenv": true, "setx": true,
	"config:set": true, "secrets:set": true, "env:set": true,
}

// commandHints are the words whose presence makes findCommands worth a
// parse: every command in commandRules, loginCommands and setterVerbs
// contains one, and so do the special cases of findInCommand.
var commandHints = [...]string{
	"mysql", "maria", "sshpass", "curl", "http", "xh", "7z", "rar", "zip",
	"redis", "mongo", "openssl", "smbclient", "ldap", "security", "login",
	"set", "config", "htpasswd", "secret",
}

// mayHoldCommand reports whether s holds a word findCommands looks for.
func mayHoldCommand(s string) bool {
	for _, h := range &commandHints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// findCommands appends the spans of secrets that the command they are given
// to marks: the options in commandRules, the value after a secret-named key
// in a setter (aws configure set aws_secret_access_key KEY), htpasswd -b's
// password, gh secret set's --body, kubectl create secret's literals, and
// the token of cargo login and vault login.
func findCommands(t *shellText, spans []span) []span {
	for i := 0; i < len(t.words); {
		j := i + 1
		for j < len(t.words) && !t.words[j].cmd {
			j++
		}
		spans = findInCommand(t, t.words[i:j], spans)
		i = j
	}
	return spans
}

// findInCommand looks at one simple command.
func findInCommand(t *shellText, words []shellWord, spans []span) []span {
	k := commandStart(t, words)
	if k >= len(words) {
		return spans
	}
	spans = findSetter(t, words[k:], spans)
	name := baseName(t.val(words[k]))
	args := words[k+1:]
	if rules, ok := commandRules[name]; ok {
		return findRules(t, args, rules, spans)
	}
	switch {
	case loginCommands[name] && hasWord(t, args, "login"):
		return findRules(t, args, loginRules, spans)
	case name == "gh" && hasWord(t, args, "secret"):
		return findRules(t, args, []argRule{{flag: "-b", glued: true, apart: true}, {flag: "--body", apart: true}, {flag: "--body=", glued: true}}, spans)
	case name == "htpasswd":
		return findHtpasswd(t, args, spans)
	case (name == "kubectl" || name == "oc") && hasWord(t, args, "secret"):
		for _, w := range args {
			if v := t.val(w); strings.HasPrefix(v, "--from-literal=") {
				lit := v[len("--from-literal="):]
				if eq := strings.IndexByte(lit, '='); eq >= 0 && eq+1 < len(lit) {
					spans = append(spans, t.wordSpan(w, len(v)-len(lit)+eq+1))
				}
			}
		}
	case (name == "cargo" || name == "vault") && len(args) >= 2 && t.val(args[0]) == "login":
		if v := t.val(args[1]); v != "" && v[0] != '-' && !strings.Contains(v, "=") && !isVarRef(v) {
			spans = append(spans, t.wordSpan(args[1], 0))
		}
	case name == "dotnet" && len(args) >= 4 && t.val(args[0]) == "user-secrets" && t.val(args[1]) == "set":
		// Every value a user secret holds is a secret, whatever its key.
		if v := t.val(args[3]); v != "" && !isVarRef(v) {
			spans = append(spans, t.wordSpan(args[3], 0))
		}
	}
	return spans
}

// findRules appends the values args give to the options in rules.
func findRules(t *shellText, args []shellWord, rules []argRule, spans []span) []span {
	for i, w := range args {
		v := t.val(w)
		if v == "--" {
			break
		}
		for _, r := range rules {
			switch {
			case v == r.flag && r.apart && i+1 < len(args):
				nw := args[i+1]
				nv := t.val(nw)
				if nv == "" || r.optional && nv[0] == '-' {
					continue
				}
				spans = appendArg(t, nw, 0, nv, r, spans)
			case r.glued && len(v) > len(r.flag) && strings.HasPrefix(v, r.flag) && !strings.HasPrefix(r.flag, "--") && v[1] != '-':
				spans = appendArg(t, w, len(r.flag), v[len(r.flag):], r, spans)
			case r.glued && strings.HasSuffix(r.flag, "=") && len(v) > len(r.flag) && strings.HasPrefix(v, r.flag):
				spans = appendArg(t, w, len(r.flag), v[len(r.flag):], r, spans)
			}
		}
	}
	return spans
}

// appendArg appends the span of the secret in val, the value of word w from
// byte off on, given through rule r.
func appendArg(t *shellText, w shellWord, off int, val string, r argRule, spans []span) []span {
	if r.after != "" {
		at := strings.Index(val, r.after)
		if at < 0 {
			return spans
		}
		off += at + len(r.after)
		val = val[at+len(r.after):]
	}
	if val == "" || isVarRef(val) {
		return spans
	}
	return append(spans, t.wordSpan(w, off))
}

// findSetter appends the value of a key set with a setter verb (see
// setterVerbs) among the first three words: the verb, its options, then the
// key and its value. Only a secret-named key's value is masked. A verb later
// in the words is prose ("the rules set for them"), not a setter.
func findSetter(t *shellText, words []shellWord, spans []span) []span {
	for i := 0; i < len(words) && i < 3; i++ {
		if !setterVerbs[t.val(words[i])] {
			continue
		}
		k := i + 1
		for k < len(words) && (strings.HasPrefix(t.val(words[k]), "-") || setterVerbs[t.val(words[k])]) {
			k++ // options, and the set of aws configure set
		}
		if k+1 >= len(words) {
			return spans
		}
		key, val := t.val(words[k]), t.val(words[k+1])
		kind := classify(key)
		if kind == notSecret || strings.Contains(key, "=") || val == "" || val[0] == '-' || isVarRef(val) || !secretValue(kind, val) {
			return spans
		}
		return append(spans, t.wordSpan(words[k+1], 0))
	}
	return spans
}

// findHtpasswd appends the password of htpasswd -b, its last operand.
func findHtpasswd(t *shellText, args []shellWord, spans []span) []span {
	batch, last := false, -1
	for i, w := range args {
		v := t.val(w)
		if len(v) > 1 && v[0] == '-' {
			batch = batch || strings.IndexByte(v, 'b') > 0
			continue
		}
		last = i
	}
	if !batch || last < 0 || isVarRef(t.val(args[last])) {
		return spans
	}
	return append(spans, t.wordSpan(args[last], 0))
}

// wrappers run the command that follows their own options; the letters are
// their short options that take an argument, and positional is how many
// operands come before the command (timeout's duration, chroot's root).
var wrappers = map[string]struct {
	argFlags   string
	positional int
}{
	"sudo": {"ugCDhprtUT", 0}, "doas": {"uC", 0}, "env": {"uCS", 0}, "exec": {"a", 0},
	"nohup": {}, "time": {"fo", 0}, "nice": {"n", 0}, "ionice": {"cnp", 0},
	"command": {}, "builtin": {}, "timeout": {"sk", 1}, "stdbuf": {"ioe", 0},
	"xargs": {"IinPdaELs", 0}, "watch": {"nd", 0}, "chroot": {"", 1}, "strace": {"eopsS", 0},
	"ltrace": {"eops", 0}, "unbuffer": {}, "proxychains": {"f", 0}, "proxychains4": {"f", 0},
	"torsocks": {}, "rlwrap": {}, "caffeinate": {"tw", 0},
	"then": {}, "do": {}, "else": {}, "if": {}, "while": {}, "until": {}, "!": {}, "{": {},
	// A shell's -c command is read as a word of its own (see findShell),
	// or, when quoting went astray, as the words that follow.
	"sh": {}, "bash": {}, "zsh": {}, "dash": {}, "ksh": {},
}

// commandStart returns the index of the command's name in words, past
// variable assignments and wrappers such as sudo and env.
func commandStart(t *shellText, words []shellWord) int {
	k := 0
	for k < len(words) {
		v := t.val(words[k])
		if isAssignment(v) {
			k++
			continue
		}
		wr, ok := wrappers[baseName(v)]
		if !ok {
			return k
		}
		k++
	options:
		for k < len(words) {
			v := t.val(words[k])
			switch {
			case len(v) == 2 && v[0] == '-' && strings.IndexByte(wr.argFlags, v[1]) >= 0:
				k += 2
			case len(v) > 1 && v[0] == '-' || isAssignment(v):
				k++
			case wr.positional > 0:
				wr.positional--
				k++
			default:
				break options
			}
		}
	}
	return k
}

// isAssignment reports whether v is a shell variable assignment, NAME=value.
func isAssignment(v string) bool {
	eq := strings.IndexByte(v, '=')
	if eq <= 0 || v[0] >= '0' && v[0] <= '9' {
		return false
	}
	for i := 0; i < eq; i++ {
		if !isWordByte(v[i]) {
			return false
		}
	}
	return true
}

// baseName returns the last path element of a command name: mysql for
// /usr/bin/mysql.
func baseName(v string) string {
	return v[strings.LastIndexByte(v, '/')+1:]
}

// hasWord reports whether one of words has the value v.
func hasWord(t *shellText, words []shellWord, v string) bool {
	for _, w := range words {
		if t.val(w) == v {
			return true
		}
	}
	return false
}
