// Package keystore is the signing.Signer backend that keeps EVM keys on the
// host, in Web3 Secret Storage (version 3, scrypt) files that geth, Clef and
// other wallets read and write.
//
// Key files live in one directory (warden passes $WARDEN_HOME/keys), created
// mode 0700; each file is mode 0600, written atomically and never over an
// existing file, and named in geth's style (UTC--<time>--<address>). Create
// makes a new key, ImportPrivateKey and ImportFile bring in an existing one,
// List shows what the directory holds.
//
// Open decrypts one key with its passphrase and returns a *Key, which holds
// the key in memory and signs EIP-1559 and legacy (EIP-155) transactions and
// EIP-191 personal_sign messages. It refuses what no policy may sign: a
// transaction without a chain id, of another type, with an access list or
// EIP-7702 authorizations. What to sign is decided upstream (signing/policy).
//
// Unlocking costs what the file's scrypt parameters say: about a second and
// 256 MB for Standard. Unlock once at start-up and keep the *Key; never
// re-derive per request. Passphrases come from FromFile or FromEnv.
//
// No error, string or log line from this package contains key material or a
// passphrase.
package keystore
