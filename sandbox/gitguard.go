package sandbox

// A GitGuard watches, for one sandbox, what git on the host would run from
// the project once a command has written it: the config and hooks of
// repositories the command made or changed and put where git enters by
// itself (a gitlink in the project's index, a git directory under
// .git/modules), which no read-only mount made at the start can cover. It
// is called before a command (or a long-lived sandbox) starts, with the
// Spec, and returns the sweep to call once what the command ran has ended
// (in a long-lived sandbox also at each health check and when it stops);
// the sweep makes those repositories safe and returns a warning for each
// one it changed or could not. Nil returned means nothing to watch.
type GitGuard func(s *Spec) (sweep func() []string)
