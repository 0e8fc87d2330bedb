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
// one it changed or could not. Nil returned means nothing to watch. With
// nested set it watches every repository nested in the project as well,
// which costs a search of the project's directories at each sweep: for
// the sweeps off a command's path (a one-shot run's end, a long-lived
// sandbox's health checks and stop).
type GitGuard func(s *Spec, nested bool) (sweep func() []string)
