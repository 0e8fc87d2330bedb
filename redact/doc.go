// Package redact removes secrets from text and JSON before anything is stored
// in the audit log or printed.
//
// String masks secret-shaped substrings of free text: provider API keys, JWTs,
// PEM private keys, 32-byte hex private keys, BIP-39 mnemonics, and the values
// of secret-named pairs such as PASSWORD=x, db_password = x, "token": "x",
// Authorization: Bearer x, --api-key x and the password of a URL's user info.
// It also reads the text as shell words, the way a shell would after quote
// removal: a secret split by quoting (AKIA""IOSF...) is found there and masked
// with its quotes, and so are the secrets that only their command marks
// (mysql -pPASS, sshpass -p PASS, curl -u user:PASS, aws configure set
// aws_secret_access_key KEY). JSON masks whole values under secret-named keys
// (see IsSecretKey) and passes every other string value through String.
//
// Redaction fails safe: when a value may be a secret it is masked, even if that
// hides something harmless, such as a transaction hash that looks exactly like a
// private key, or a bare 64-digit hex run that no label ("sha256:", "digest",
// "hash", "commit") marks as a digest. A path is never a secret by itself:
// "~/.aws/credentials" in a deny reason stays readable, while a secret in the
// file's contents is masked. Both functions are idempotent: redacting their
// output again changes nothing.
//
// The package does no work at init, so importing it costs a short-lived CLI
// process nothing: the few detectors that need tables build them on first use.
package redact

// Mask replaces every redacted value.
const Mask = "[REDACTED]"
