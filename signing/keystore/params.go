package keystore

import "github.com/agentwarden/warden"

// Params are the scrypt cost parameters a key file is encrypted with (r is
// always 8, as in geth). The zero value is invalid and refused.
type Params struct{ N, P int }

var (
	// Standard is geth's StandardScryptN/P (N = 2^18, P = 1): about a second
	// and 256 MB per unlock. Use it for every real key.
	Standard = Params{N: 1 << 18, P: 1}
	// Light is geth's LightScryptN/P (N = 2^12, P = 6): about 0.1 s and 4 MB.
	// For tests only; it makes a stolen key file much cheaper to brute-force.
	Light = Params{N: 1 << 12, P: 6}
)

// scryptR is the r parameter geth writes.
const scryptR = 8

// check refuses parameters scrypt cannot use, or that cost more than a key
// file from another wallet may (see checkScrypt).
func (p Params) check() error {
	if p.N < 2 || p.N&(p.N-1) != 0 || p.P < 1 {
		return warden.Errorf(warden.EInvalid, "scrypt parameters N=%d P=%d are invalid: N must be a power of two above 1 and P at least 1", p.N, p.P).
			WithHint("use keystore.Standard")
	}
	if err := checkScrypt(p.N, scryptR, p.P); err != nil {
		return warden.Errorf(warden.EInvalid, "scrypt parameters N=%d P=%d cost too much", p.N, p.P).
			WithHint("use keystore.Standard").Wrap(err)
	}
	return nil
}

// checkPassphrase refuses an empty passphrase; what names it for the message
// ("the passphrase", "the new passphrase").
func checkPassphrase(pass []byte, what string) error {
	if len(pass) == 0 {
		return warden.Errorf(warden.EInvalid, "%s is empty; a key file is only as safe as its passphrase", what).
			WithHint("use a long random passphrase, kept in a file only you can read (chmod 600)")
	}
	return nil
}
