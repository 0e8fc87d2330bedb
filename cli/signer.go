package cli

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

func signerCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "signer", Short: "Manage the signing key that warden serve signs with"}
	var (
		passFile, passEnv string
		importKey, oldKS  string
		oldPassFile       string
	)
	initC := &cobra.Command{
		Use:   "init",
		Short: "Create or import the signing key into the encrypted keystore",
		Long: `Create a new EVM key, or import one, into the keystore ($WARDEN_HOME/keys, or
signing.keystore) as a Web3 Secret Storage file (scrypt), mode 0600, which
other wallets can read. The key never leaves the keystore unencrypted:
warden serve unlocks it once at start and signs with it for sandboxed
agents, within the signing policy.

The passphrase comes from --passphrase-file, the variable --passphrase-env
names, signing.passphraseFile / signing.passphraseEnv, or the terminal
(asked twice). Never from an agent.`,
		Example: `  warden signer init
  warden signer init --passphrase-file ~/.config/warden/passphrase
  warden signer init --import-key key.hex --passphrase-env WARDEN_SIGNER_PASSPHRASE
  warden signer init --import-keystore UTC--2026…--abcd.json --old-passphrase-file old.txt`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			home, p, err := e.policy()
			if err != nil {
				return err
			}
			pass, err := newPassphrase(e, p, passFile, passEnv)
			if err != nil {
				return err
			}
			defer clear(pass)
			dir := app.KeystoreDir(home, p)
			var (
				addr signing.Address
				path string
			)
			switch {
			case importKey != "" && oldKS != "":
				return warden.Errorf(warden.EInvalid, "--import-key and --import-keystore are two ways to import; give one")
			case importKey != "":
				raw, err := os.ReadFile(importKey)
				if err != nil {
					return warden.Errorf(warden.EInvalid, "cannot read the key file %s", importKey).Wrap(err)
				}
				defer clear(raw)
				stop := e.spinner("encrypting the key (scrypt, about a second)")
				addr, path, err = keystore.ImportPrivateKey(dir, raw, pass, keystore.Standard)
				stop()
				if err != nil {
					return err
				}
			case oldKS != "":
				js, err := os.ReadFile(oldKS)
				if err != nil {
					return warden.Errorf(warden.EInvalid, "cannot read the keystore file %s", oldKS).Wrap(err)
				}
				old, err := oldPassphrase(e, oldPassFile)
				if err != nil {
					return err
				}
				defer clear(old)
				stop := e.spinner("decrypting and re-encrypting the key (scrypt, a few seconds)")
				addr, path, err = keystore.ImportFile(dir, js, old, pass, keystore.Standard)
				stop()
				if err != nil {
					return err
				}
			default:
				stop := e.spinner("making and encrypting a new key (scrypt, about a second)")
				addr, path, err = keystore.Create(dir, pass, keystore.Standard)
				stop()
				if err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stdout, "%s\n", signing.Checksum(addr))
			fmt.Fprintf(e.stderr, "warden: key %s stored in %s; restart warden serve to sign with it\n", signing.Checksum(addr), path)
			return nil
		},
	}
	f := initC.Flags()
	f.StringVar(&passFile, "passphrase-file", "", "file holding the new passphrase (mode 0600)")
	f.StringVar(&passEnv, "passphrase-env", "", "name of the environment variable holding the new passphrase")
	f.StringVar(&importKey, "import-key", "", "import the hex private key in this file")
	f.StringVar(&oldKS, "import-keystore", "", "import this keystore (Web3 Secret Storage) file, re-encrypted")
	f.StringVar(&oldPassFile, "old-passphrase-file", "", "file holding the imported keystore's passphrase (else asked)")

	addrC := &cobra.Command{
		Use:   "address",
		Short: "Print the address warden signs as (the key is not unlocked)",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			home, p, err := e.policy()
			if err != nil {
				return err
			}
			es, err := keystore.List(app.KeystoreDir(home, p))
			if err != nil {
				return err
			}
			if len(es) == 0 {
				return warden.Errorf(warden.ENotFound, "there is no signing key in %s", app.KeystoreDir(home, p)).
					WithHint("create one with `warden signer init`")
			}
			if a, ok := app.SignerAddress(home, p); ok {
				fmt.Fprintln(e.stdout, signing.Checksum(a))
				return nil
			}
			for _, k := range es {
				fmt.Fprintln(e.stdout, signing.Checksum(k.Address))
			}
			return warden.Errorf(warden.EInvalid, "the keystore holds %d keys and signing.address names none of them", len(es)).
				WithHint("set signing.address to the one warden should sign with")
		},
	}
	c.AddCommand(initC, addrC)
	return c
}

// policy is the home and its policy, without opening the database.
func (e *env) policy() (app.Home, *config.Policy, error) {
	home, err := e.homeDir()
	if err != nil {
		return "", nil, err
	}
	loaded, err := config.Load(home.PolicyPath())
	if err != nil {
		return "", nil, err
	}
	return home, loaded.Policy, nil
}

// newPassphrase reads the passphrase for a new key: a flag, the policy's
// source, or the terminal, asked twice.
func newPassphrase(e *env, p *config.Policy, file, envName string) ([]byte, error) {
	switch {
	case file != "" && envName != "":
		return nil, warden.Errorf(warden.EInvalid, "--passphrase-file and --passphrase-env are two sources; give one")
	case file != "":
		return keystore.FromFile(file)
	case envName != "":
		return keystore.FromEnv(envName, os.LookupEnv)
	case p.Signing.PassphraseFile != "" || p.Signing.PassphraseEnv != "":
		return app.Passphrase(p, nil)
	}
	first, err := promptSecret("new passphrase of the signing key: ")
	if err != nil {
		return nil, err
	}
	again, err := promptSecret("the same passphrase again: ")
	if err != nil {
		clear(first)
		return nil, err
	}
	defer clear(again)
	if !bytes.Equal(first, again) {
		clear(first)
		return nil, warden.Errorf(warden.EInvalid, "the two passphrases differ; nothing was stored")
	}
	return first, nil
}

func oldPassphrase(e *env, file string) ([]byte, error) {
	if file != "" {
		return keystore.FromFile(file)
	}
	return promptSecret("passphrase of the imported keystore: ")
}

// promptSecret asks on the controlling terminal without echo.
func promptSecret(msg string) ([]byte, error) {
	tty, err := openTerminal()
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "no terminal to ask for the passphrase on (%v)", err).
			WithHint("give --passphrase-file or --passphrase-env, or set signing.passphraseFile")
	}
	defer tty.Close()
	fmt.Fprint(tty, msg)
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "could not read the passphrase from the terminal").Wrap(err)
	}
	if len(b) == 0 {
		return nil, warden.Errorf(warden.EInvalid, "the passphrase is empty").WithHint("type a passphrase")
	}
	return b, nil
}
