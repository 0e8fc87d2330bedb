// Package fleet holds warden's end-to-end fleet tests (issue 27): warden
// homes whose policy names one PostgreSQL database (store.dsn), driven
// through the built warden binary and its daemons. They need a PostgreSQL
// server: WARDEN_TEST_POSTGRES_DSN, or a throwaway cluster internal/pgtest
// starts (scripts/postgres.sh); without either they skip saying why.
//
// The package has no code of its own.
package fleet
