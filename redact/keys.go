package redact

import "strings"

// IsSecretKey reports whether a map key, JSON key, variable or flag name names a
// secret: token, secret, password, passwd, pwd, passphrase, api_key, private_key,
// mnemonic, seed, authorization, cookie, credentials, bearer and the like.
// Matching ignores case and splits words at '-', '_', '.', other punctuation and
// camelCase humps, so "x-api-key", "OPENAI_API_KEY" and "apiKey" all match.
//
// Token counts and token (coin) names stay readable: "max_tokens",
// "input_tokens", "allowedTokens", "token_in", "token_out", "token_address",
// "token_symbol" and namespaced keys such as "token:ETH" are not secret, while
// "token", "access_token", "authToken" and "refresh_tokens" are. Names of
// where a secret is kept rather than of the secret ("password_file",
// "token_path", "secret_name") are not secret either, nor are the environment
// variables PWD and OLDPWD (the working directory) or the empty key.
func IsSecretKey(key string) bool { return classify(key) != notSecret }

// keyKind is how secret a key is. The weaker kinds let a value that cannot be
// a credential stay readable (see secretValue).
type keyKind uint8

const (
	notSecret keyKind = iota
	secretKey         // every value is masked
	bareToken         // exactly "token": a ticker symbol or a coin address stays
	seedKey           // secret only for "seed": an integer (an RNG seed) stays
)

// classify returns the kind of key.
func classify(key string) keyKind {
	// A namespaced coin key, as in {"exposure_usd": {"token:ETH": 10}}: what
	// follows the colon names the coin.
	for len(key) > len("token:") && foldPrefix(key, "token:") {
		key = key[len("token:"):]
	}
	if key == "PWD" || key == "OLDPWD" || !hasKeyword(key) || isFileName(key) {
		return notSecret
	}
	var buf [48]byte
	var spans [8]span
	flat, words := splitKey(key, buf[:0], spans[:0])
	if len(words) == 0 {
		return notSecret
	}
	if hasMetaSuffix(flat) {
		return notSecret
	}
	if hasStem(flat) {
		return secretKey
	}
	last := words[len(words)-1]
	switch string(flat[last.lo:last.hi]) {
	case "auth", "pass", "jwt", "pw":
		return secretKey
	}
	// "Authorization" and "Proxy-Authorization" are header names, but an
	// EIP-7702 "authorizationList" or an OAuth "authorization_endpoint" is
	// public and worth auditing.
	if string(flat) == "authorization" || hasSuffix(flat, "authorization") {
		return secretKey
	}
	seed := false
	for i, w := range words {
		word := flat[w.lo:w.hi]
		prev, next := wordAt(flat, words, i-1), wordAt(flat, words, i+1)
		switch string(word) {
		case "pwd", "pw":
			return secretKey
		case "seed", "seeds":
			seed = true
		case "key", "keys":
			if keyQualifier(prev) {
				return secretKey
			}
		}
		if secretToken(word, prev, next) {
			if len(words) == 1 && string(word) == "token" {
				return bareToken
			}
			return secretKey
		}
	}
	if seed {
		return seedKey
	}
	return notSecret
}

// hasKeyword reports whether key contains, ignoring case, a word that every
// secret key holds: token, secret, pass, pw, cred, cookie, auth, mnemonic,
// bearer, seed, key or jwt. It lets classify turn away "count" or "oneline"
// without splitting them.
func hasKeyword(key string) bool {
	for i := 0; i < len(key); i++ {
		r := key[i:]
		var hit bool
		switch key[i] | 0x20 {
		case 't':
			hit = foldPrefix(r, "token")
		case 's':
			hit = foldPrefix(r, "secret") || foldPrefix(r, "seed")
		case 'p':
			hit = foldPrefix(r, "pass") || foldPrefix(r, "pw")
		case 'c':
			hit = foldPrefix(r, "cred") || foldPrefix(r, "cookie")
		case 'a':
			hit = foldPrefix(r, "auth")
		case 'm':
			hit = foldPrefix(r, "mnemonic")
		case 'b':
			hit = foldPrefix(r, "bearer")
		case 'k':
			hit = foldPrefix(r, "key")
		case 'j':
			hit = foldPrefix(r, "jwt")
		}
		if hit {
			return true
		}
	}
	return false
}

// foldPrefix reports whether s starts with lower, a lower-case ASCII word,
// ignoring the case of s.
func foldPrefix(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for j := 0; j < len(lower); j++ {
		if s[j]|0x20 != lower[j] {
			return false
		}
	}
	return true
}

// hasMetaSuffix reports whether flat ends in a word that names where a
// secret is kept or how it is handled, not the secret: "password_file",
// "tokenPath", "secret_name", "api_key_env".
func hasMetaSuffix(flat []byte) bool {
	if len(flat) == 0 {
		return false
	}
	switch flat[len(flat)-1] {
	case 'e':
		return hasSuffix(flat, "file") || hasSuffix(flat, "name")
	case 's':
		return hasSuffix(flat, "files") || hasSuffix(flat, "paths")
	case 'h':
		return hasSuffix(flat, "path") || hasSuffix(flat, "length")
	case 'r':
		return hasSuffix(flat, "dir") || hasSuffix(flat, "provider") || hasSuffix(flat, "helper")
	case 'd':
		return hasSuffix(flat, "fd")
	case 'v':
		return hasSuffix(flat, "env")
	case 'n':
		return hasSuffix(flat, "stdin") || hasSuffix(flat, "arn")
	case 't':
		return hasSuffix(flat, "prompt")
	case 'y':
		return hasSuffix(flat, "policy")
	case 'f':
		return hasSuffix(flat, "ref")
	}
	return false
}

// hasStem reports whether flat, a key without separators, contains a word
// that always names a secret. Matching inside the run-together key also
// catches names such as "APIKEY" or "PGPASSWORD".
func hasStem(flat []byte) bool {
	for i := range flat {
		r := flat[i:]
		var hit bool
		switch flat[i] {
		case 's':
			hit = hasPrefix(r, "secret") || hasPrefix(r, "seedphrase") || hasPrefix(r, "signingkey")
		case 'p':
			if hasPrefix(r, "pass") {
				r = r[len("pass"):]
				hit = hasPrefix(r, "word") || hasPrefix(r, "wd") || hasPrefix(r, "phrase") || hasPrefix(r, "code")
			} else {
				hit = hasPrefix(r, "privkey") || hasPrefix(r, "privatekey")
			}
		case 'c':
			hit = hasPrefix(r, "credential") || hasPrefix(r, "cookie")
		case 'm':
			hit = hasPrefix(r, "mnemonic")
		case 'b':
			hit = hasPrefix(r, "bearer")
		case 'a':
			hit = hasPrefix(r, "apikey") || hasPrefix(r, "accesskey") || hasPrefix(r, "authkey") ||
				hasPrefix(r, "authorizationcode") || hasPrefix(r, "authorizationheader")
		}
		if hit {
			return true
		}
	}
	return false
}

// keyQualifier reports whether a word before "key" makes it a secret key:
// "private_key", "signing_key", "app_key"; not "public_key" or "primary_key".
func keyQualifier(w []byte) bool {
	switch string(w) {
	case "api", "private", "priv", "secret", "signing", "sign", "access",
		"encryption", "encrypt", "enc", "decryption", "master", "client", "ssh",
		"deploy", "hmac", "session", "license", "auth", "root", "app", "shared",
		"symmetric", "aes", "account", "recovery", "wallet":
		return true
	}
	return false
}

// splitKey appends key's letters and digits, lowercased and without
// separators, to flat, and the ranges of its words within flat to words.
// A word ends at any byte that is not an ASCII letter or digit (non-ASCII bytes
// count as letters), at a lower-to-upper hump ("apiKey") and before the last
// capital of an acronym ("APIKey").
func splitKey(key string, flat []byte, words []span) ([]byte, []span) {
	const (
		other = iota
		lower
		upper
		digit
	)
	start, prev := -1, other
	for i := 0; i < len(key); i++ {
		c := key[i]
		cls := other
		switch {
		case is(c, cLower) || c >= 0x80:
			cls = lower
		case is(c, cLetter):
			cls = upper
		case is(c, cAlnum):
			cls = digit
		}
		hump := cls == upper && (prev == lower || prev == digit ||
			prev == upper && i+1 < len(key) && is(key[i+1], cLower))
		if (cls == other || hump) && start >= 0 {
			words = append(words, span{start, len(flat)})
			start = -1
		}
		prev = cls
		if cls == other {
			continue
		}
		if start < 0 {
			start = len(flat)
		}
		if cls == upper {
			c += 'a' - 'A'
		}
		flat = append(flat, c)
	}
	if start >= 0 {
		words = append(words, span{start, len(flat)})
	}
	return flat, words
}

// wordAt returns word i of flat, or nil when i is out of range.
func wordAt(flat []byte, words []span, i int) []byte {
	if i < 0 || i >= len(words) {
		return nil
	}
	return flat[words[i].lo:words[i].hi]
}

// hasPrefix reports whether b starts with prefix.
func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// hasSuffix reports whether b ends with suffix and is longer than it.
func hasSuffix(b []byte, suffix string) bool {
	return len(b) > len(suffix) && string(b[len(b)-len(suffix):]) == suffix
}

// isFileName reports whether key names a file rather than a secret: a path
// ("~/.aws/credentials", "/run/secrets/db_password", "C:\\keys\\token") or a
// name with a file extension ("secrets.json", "token.txt"). A path in a deny
// reason or a file listing is not a secret; the file's contents may hold one,
// and are redacted where they appear.
func isFileName(key string) bool {
	if key[0] == '~' || strings.ContainsAny(key, "/\\") {
		return true
	}
	dot := strings.LastIndexByte(key, '.')
	if dot <= 0 {
		return false
	}
	switch strings.ToLower(key[dot+1:]) {
	case "json", "yaml", "yml", "toml", "ini", "conf", "cfg", "txt", "pem", "crt",
		"csr", "der", "p12", "pfx", "jks", "gpg", "asc", "age", "enc", "db",
		"sqlite", "log", "csv", "xml", "sh", "py", "js", "ts", "go", "rb", "md",
		"bak", "tmp", "lock", "pub", "kdbx":
		return true
	}
	return false
}
