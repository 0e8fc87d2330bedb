package config

import (
	"net/url"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// storeFile is the store section as written in warden.yaml.
type storeFile struct {
	DSN          string `yaml:"dsn" want:"a postgres:// URL without a password, or \"\" for the home's SQLite database"`
	PasswordFile string `yaml:"passwordFile" want:"a file path, absolute or starting with ~/ (\"\" for none)"`
	PasswordEnv  string `yaml:"passwordEnv" want:"an environment variable name such as WARDEN_PG_PASSWORD (\"\" for none)"`
	KeyFile      string `yaml:"keyFile" want:"a file path, absolute or starting with ~/ (\"\" for audit.key in the home)"`

	// invalid is set by storeFailClosed: the section could not be read, so
	// no store may be opened (falling back to the home's SQLite database
	// would split a fleet's log and cap silently). It has no yaml key.
	invalid bool
}

// Store is where the audit log, the spend ledger, the rate slots and the
// approvals live (the store section). The zero value is the home's own
// SQLite database.
type Store struct {
	// DSN is a postgres:// URL naming the fleet's PostgreSQL database, with
	// no password; "" is the home's SQLite database.
	DSN string
	// PasswordFile is the file holding the database password, as written
	// ("~" not expanded); PasswordEnv names the environment variable holding
	// it. At most one is set; with neither, the driver's own PGPASSWORD and
	// PGPASSFILE apply.
	PasswordFile, PasswordEnv string
	// KeyFile is the fleet's checkpoint key (the same file on every host), as
	// written; "" is audit.key in the home.
	KeyFile string
	// Invalid says the section could not be read: no store may be opened.
	Invalid bool
}

var storeSection = &sectionDef[storeFile]{
	key:        "store",
	defaultsOf: func() *storeFile { return &storeFile{} },
	check:      checkStore,
	toRuntime: func(f *storeFile, p *Policy) {
		p.Store = Store{DSN: f.DSN, PasswordFile: f.PasswordFile, PasswordEnv: f.PasswordEnv, KeyFile: f.KeyFile, Invalid: f.invalid}
	},
	failClosed: func(_ []*yaml.Node, f *storeFile) string {
		f.invalid = true
		return "no store is opened until the store section is fixed: every decision is refused"
	},
}

func checkStore(f *storeFile, c *checker) {
	// The DSN is quoted back only when it holds no password: a problem is
	// logged and audited.
	if f.DSN != "" {
		if why := CheckStoreDSN(f.DSN); why != "" {
			c.reportf([]any{"dsn"}, "dsn %s", why)
		}
	}
	if f.PasswordFile != "" {
		if why := badHomePath(f.PasswordFile); why != "" {
			c.reportf([]any{"passwordFile"}, "passwordFile %s; want the path of a file holding the database password, absolute or starting with ~/. "+
				"The password itself never goes in this file: if that was the password, remove it and change it", why)
		}
	}
	if f.PasswordEnv != "" && !upperEnvName(f.PasswordEnv) {
		c.reportf([]any{"passwordEnv"}, "passwordEnv is not an environment variable name (upper-case letters, digits and _, e.g. WARDEN_PG_PASSWORD); "+
			"the password itself never goes in this file: if that was the password, remove it and change it")
	}
	if f.PasswordFile != "" && f.PasswordEnv != "" {
		c.reportf([]any{"passwordEnv"}, "passwordFile and passwordEnv are both set; want one of them")
	}
	if f.KeyFile != "" {
		if why := badHomePath(f.KeyFile); why != "" {
			c.reportf([]any{"keyFile"}, "keyFile %s; want the path of the fleet's checkpoint key, absolute or starting with ~/", why)
		}
	}
	if f.DSN == "" && (f.PasswordFile != "" || f.PasswordEnv != "" || f.KeyFile != "") {
		c.reportf([]any{"dsn"}, "dsn is empty, so passwordFile, passwordEnv and keyFile have no database to apply to; set dsn to the fleet's postgres:// URL or remove them")
	}
}

// CheckStoreDSN says what is wrong with dsn as a fleet store's address, or
// returns "". It never repeats a password the DSN holds.
func CheckStoreDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		if strings.Contains(dsn, "@") || strings.Contains(strings.ToLower(dsn), "password") {
			return "is not a postgres:// URL; want postgres://USER@HOST/DATABASE, with the password in passwordFile or passwordEnv"
		}
		return "is " + quote(dsn) + ", not a postgres:// URL; want postgres://USER@HOST/DATABASE"
	}
	if _, ok := u.User.Password(); ok {
		return "holds a password; the password never goes in the policy file or on the command line: put it in the file passwordFile names or the variable passwordEnv names (then change it: it was written down)"
	}
	for k := range u.Query() {
		if strings.EqualFold(k, "password") {
			return "holds a password parameter; the password never goes in the policy file or on the command line: put it in the file passwordFile names or the variable passwordEnv names (then change it: it was written down)"
		}
	}
	if strings.Trim(u.Path, "/") == "" {
		return "is " + quote(dsn) + ", which names no database; want postgres://USER@HOST/DATABASE"
	}
	return ""
}
