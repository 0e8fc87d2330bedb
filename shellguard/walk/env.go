package walk

import (
	"maps"
	"slices"
	"strings"
)

// varVal is a variable's value as far as Walk knows it. fds is set on a
// variable the shell puts file descriptors in: a coprocess's array
// (coproc NAME), whose elements 0 and 1 are numbers it chose, and the
// name of a {NAME}> redirection. arr holds a known indexed array's
// elements (s is then its first, what $NAME gives); nil for a scalar.
// The slice is never changed in place: states share it.
type varVal struct {
	s     string
	known bool
	fds   bool
	arr   []string
	// temp is set on an unknown value that is the path of a name mktemp
	// made in the temporary directory s (d=$(mktemp -d)).
	temp bool
	// tempArr, with temp, says the value is an array each of whose
	// elements is such a name (dirs=(); dirs+=("$d")), in the temporary
	// directory s.
	tempArr bool
	// prefix is the known start of an unknown value (out="dist/$v":
	// "dist/"), "" when none is known.
	prefix string
	// fed is set on an unknown value that holds whole items a process
	// substitution printed, each ending with NUL (mapfile -d '' a <
	// <(find … -print0)): the substitution's span.
	fed Span
	// elseUnassigned is set on an unknown value that is either s, which a
	// branch that may not have run assigned (make && BUILD=build), or what
	// the variable held before the line, which never assigned it before
	// that branch: where the environment lacks it, ${NAME:?} is s (unset,
	// the shell stops the command instead).
	elseUnassigned bool
}

// equal reports whether v and u are the same value.
func (v varVal) equal(u varVal) bool {
	return v.s == u.s && v.known == u.known && v.fds == u.fds && v.temp == u.temp && v.tempArr == u.tempArr && v.prefix == u.prefix && v.fed == u.fed && v.elseUnassigned == u.elseUnassigned && (v.arr == nil) == (u.arr == nil) && slices.Equal(v.arr, u.arr)
}

// state is what earlier commands changed and later commands see: the
// working directory and the variables. A subshell works on a copy.
type state struct {
	cwd    string
	cwdDyn bool
	// cwdAlts are the other directories the shell may be in, each known:
	// after a list whose cd may not have run (mkdir -p d && cd d), the
	// next command runs in cwd or one of them.
	cwdAlts []string
	// cwdVar is the variable a cd went to ("d" for cd "$d") when that is
	// why cwd is unknown; "" otherwise.
	cwdVar string
	// prev is the directory the last cd left (OLDPWD), where cd - goes
	// back to; nil when not known (no cd in the line yet, branches that
	// differ, a new shell).
	prev *dir
	vars map[string]varVal
	// untracked is set once something can change the variables and the
	// directory behind the walk's back (a trap that assigns or changes
	// directory, which fires at a signal the line may send itself; a name
	// reference; a declare attribute that rewrites values; a PS4 that
	// expands code): every variable is unknown from then on, and so is
	// the directory after a cd.
	untracked bool
	// sourced is set once the line has sourced a file the walk does not
	// read: the environment's variables may have been given values, so
	// none is known to be unset (Options.Unset) from then on.
	sourced bool
	// volatile are variables something may change at any later point (a
	// trap's code assigns them, a declare attribute rewrites what they
	// are given): unknown from then on, whatever is assigned.
	volatile map[string]bool
	// namerefs are the name references declared (declare -n NAME=TARGET),
	// with their target, "" when not known: assigning one assigns that.
	namerefs map[string]string
	// errexit is set once set -e is on: a failing command that is not
	// tested ends the shell.
	errexit bool
	// readonly are the variables made read-only (readonly NAME, declare
	// -r): bash refuses to assign or unset them, so they keep their value.
	readonly map[string]bool
}

// makeVolatile keeps each of names unknown from now on.
func (s *state) makeVolatile(names ...string) {
	if s.volatile == nil {
		s.volatile = map[string]bool{}
	}
	if s.vars == nil {
		s.vars = make(map[string]varVal)
	}
	for _, n := range names {
		s.volatile[n] = true
		s.vars[n] = varVal{} // not set: a name reference's target is not assigned by this
	}
}

// makeReadonly records that bash refuses to change name from now on; a
// local one (not global) ends with its function, after which the name may
// be anything: it is only kept unknown.
func (s *state) makeReadonly(name string, global bool) {
	if !global {
		s.makeVolatile(name)
		return
	}
	if s.readonly == nil {
		s.readonly = map[string]bool{}
	}
	s.readonly[name] = true
}

// dir is a working directory as state holds it.
type dir struct {
	cwd    string
	cwdDyn bool
	alts   []string
	cwdVar string
}

// here is st's working directory, its alternatives copied.
func (s *state) here() *dir {
	return &dir{cwd: s.cwd, cwdDyn: s.cwdDyn, alts: slices.Clone(s.cwdAlts), cwdVar: s.cwdVar}
}

// equal reports whether d and e are the same directory, nil for unknown.
func (d *dir) equal(e *dir) bool {
	if d == nil || e == nil {
		return d == e
	}
	return d.cwd == e.cwd && d.cwdDyn == e.cwdDyn && d.cwdVar == e.cwdVar && slices.Equal(d.alts, e.alts)
}

// maxCwdAlts bounds cwdAlts; beyond it the directory is unknown.
const maxCwdAlts = 8

func (s *state) clone() *state {
	c := &state{cwd: s.cwd, cwdDyn: s.cwdDyn, cwdAlts: slices.Clone(s.cwdAlts), cwdVar: s.cwdVar, untracked: s.untracked, sourced: s.sourced, errexit: s.errexit,
		volatile: maps.Clone(s.volatile), namerefs: maps.Clone(s.namerefs), readonly: maps.Clone(s.readonly)}
	if s.prev != nil {
		p := *s.prev
		p.alts = slices.Clone(p.alts)
		c.prev = &p
	}
	if len(s.vars) > 0 {
		c.vars = make(map[string]varVal, len(s.vars))
		for k, v := range s.vars {
			c.vars[k] = v
		}
	}
	return c
}

// sameAs reports whether code run in s and in o sees the same thing: the
// directory (and where cd - goes), every variable, and what is tracked.
func (s *state) sameAs(o *state) bool {
	if !s.here().equal(o.here()) || s.untracked != o.untracked || s.sourced != o.sourced || !s.prev.equal(o.prev) ||
		!maps.Equal(s.volatile, o.volatile) || !maps.Equal(s.namerefs, o.namerefs) || !maps.Equal(s.readonly, o.readonly) || len(s.vars) != len(o.vars) {
		return false
	}
	for k, v := range s.vars {
		if u, ok := o.vars[k]; !ok || !v.equal(u) {
			return false
		}
	}
	return true
}

// sameFor reports whether o gives code that reads only the variables in
// reads nothing new over s: the same directory and tracking, and the same
// value for each variable it reads and each one with no lower-case letter
// (the environment's). nil reads compares every variable (sameAs).
func (s *state) sameFor(o *state, reads map[string]bool) bool {
	if reads == nil {
		return s.sameAs(o)
	}
	if !s.here().equal(o.here()) || s.untracked != o.untracked || s.sourced != o.sourced || !s.prev.equal(o.prev) ||
		!maps.Equal(s.volatile, o.volatile) || !maps.Equal(s.namerefs, o.namerefs) || !maps.Equal(s.readonly, o.readonly) {
		return false
	}
	relevant := func(name string) bool { return reads[name] || strings.ToUpper(name) == name }
	for k, v := range s.vars {
		if u, ok := o.vars[k]; relevant(k) && (!ok || !v.equal(u)) {
			return false
		}
	}
	for k := range o.vars {
		if _, ok := s.vars[k]; relevant(k) && !ok {
			return false
		}
	}
	return true
}

// merge folds a branch that may or may not have run into s: whatever the
// branch changed becomes unknown.
func (s *state) merge(b *state) {
	if !s.prev.equal(b.prev) {
		s.prev = nil
	}
	switch {
	case s.cwdDyn || b.cwdDyn || s.cwd == "" || b.cwd == "":
		if b.cwd != s.cwd || b.cwdDyn != s.cwdDyn || b.cwdVar != s.cwdVar {
			s.cwdDyn, s.cwdAlts, s.cwdVar = true, nil, ""
		}
	default:
		// Both known: the shell is in one of them (the branch's first,
		// where the next command most likely runs).
		alts := append(append([]string{s.cwd}, s.cwdAlts...), b.cwdAlts...)
		s.cwd, s.cwdAlts = b.cwd, nil
		for _, d := range alts {
			if d != s.cwd && !slices.Contains(s.cwdAlts, d) {
				s.cwdAlts = append(s.cwdAlts, d)
			}
		}
		if len(s.cwdAlts) > maxCwdAlts {
			s.cwdDyn, s.cwdAlts = true, nil
		}
	}
	for k, v := range b.vars {
		old, ok := s.vars[k]
		if ok && old.equal(v) {
			continue
		}
		s.set(k, "", false)
		// A plain value the branch gave a variable the line had not
		// assigned before it (nor may have: a name reference, a
		// volatile name), or gave it again: that value, or none of the
		// line's.
		plain := v.known && v.arr == nil && !v.fds || v.elseUnassigned
		first := !ok || old.elseUnassigned && old.s == v.s
		if plain && first && !s.untracked && !b.untracked && !s.volatile[k] && !b.volatile[k] && !s.readonly[k] {
			if _, ref := s.namerefs[k]; !ref {
				if _, ref := b.namerefs[k]; !ref {
					s.vars[k] = varVal{s: v.s, elseUnassigned: true}
				}
			}
		}
	}
	if b.untracked {
		// (the directory was merged above)
		s.forgetVars()
		s.untracked = true
	}
	s.sourced = s.sourced || b.sourced
	for k := range b.readonly {
		if !s.readonly[k] {
			// read-only only if the branch ran: what it holds is known
			// only when both agree (above), and it may keep it
			s.makeVolatile(k)
		}
	}
	for k := range b.volatile {
		s.makeVolatile(k)
	}
	for k, t := range b.namerefs {
		if old, ok := s.namerefs[k]; ok && old != t {
			t = ""
		}
		if s.namerefs == nil {
			s.namerefs = map[string]string{}
		}
		s.namerefs[k] = t
	}
}

// forgetVars forgets the value of every variable; the directory stays as
// it is, and what is assigned later is known.
func (s *state) forgetVars() {
	s.prev = nil
	for k := range s.vars {
		s.vars[k] = varVal{}
	}
}

// untrack forgets every variable and the directory, and keeps them
// unknown (state.untracked).
func (s *state) untrack() {
	s.untracked = true
	s.prev = nil
	s.cwdDyn, s.cwdAlts, s.cwdVar = true, nil, ""
	for k := range s.vars {
		s.vars[k] = varVal{}
	}
}

func (s *state) set(name, val string, known bool) {
	if s.readonly[name] {
		return // bash refuses: it keeps its value
	}
	if name == "OLDPWD" {
		s.prev = nil // cd - goes where OLDPWD says
	}
	if s.vars == nil {
		s.vars = make(map[string]varVal)
	}
	if name == "PS4" && (!known || strings.Contains(val, "=") || strings.Contains(val, "++") || strings.Contains(val, "--")) {
		// With xtrace on, PS4 is expanded before every command: an
		// assignment in it (${x:=v}, $((x+=1))) runs each time.
		s.untrack()
	}
	if s.untracked || s.volatile[name] {
		known = false
	}
	if target, ok := s.namerefs[name]; ok {
		// Assigning a name reference assigns its target; one not known
		// may be any variable.
		if target == "" || target == name {
			for k := range s.vars {
				s.vars[k] = varVal{}
			}
			s.prev = nil
		} else if s.vars != nil {
			t, _, _ := strings.Cut(target, "[")
			s.vars[t] = varVal{}
		}
		known = false
	}
	if old := s.vars[name]; known && old.known && old.arr != nil {
		// NAME=v on an array sets its element 0 and keeps the rest.
		arr := slices.Clone(old.arr)
		if len(arr) == 0 {
			arr = []string{""}
		}
		arr[0] = val
		s.vars[name] = varVal{s: val, known: true, arr: arr}
		return
	}
	s.vars[name] = varVal{s: val, known: known}
}

// setArray records name as an indexed array of known elems (none for
// NAME=()).
func (s *state) setArray(name string, elems []string) {
	if s.readonly[name] {
		return
	}
	if _, ref := s.namerefs[name]; s.untracked || s.volatile[name] || ref || elems == nil {
		s.set(name, "", false)
		return
	}
	if s.vars == nil {
		s.vars = make(map[string]varVal)
	}
	first := ""
	if len(elems) > 0 {
		first = elems[0]
	}
	s.vars[name] = varVal{s: first, known: true, arr: elems}
}

// setFed records that name holds whole items the process substitution at
// sp printed (varVal.fed), unless something may change it.
func (s *state) setFed(name string, sp Span) {
	if _, ref := s.namerefs[name]; s.untracked || s.volatile[name] || s.readonly[name] || ref {
		return
	}
	if s.vars == nil {
		s.vars = make(map[string]varVal)
	}
	s.vars[name] = varVal{fed: sp}
}

// setFDs records that the shell put descriptors in name (coproc NAME,
// {NAME}>file); any later assignment to name (set) forgets it.
func (s *state) setFDs(name string) {
	if s.vars == nil {
		s.vars = make(map[string]varVal)
	}
	s.vars[name] = varVal{fds: true}
}

// forgetFDs forgets every variable setFDs recorded: a name reference
// (declare -n) may assign one under another name.
func (s *state) forgetFDs() {
	s.prev = nil // a name reference may be OLDPWD too
	for k, v := range s.vars {
		if v.fds {
			s.vars[k] = varVal{}
		}
	}
}

// envUnset reports whether name is an environment variable the line has
// not assigned (nor may have, behind the walk's back) and Options.Unset
// says the environment lacks.
func (w *walker) envUnset(st *state, name string) bool {
	if _, assigned := st.vars[name]; assigned {
		return false
	}
	return w.unassignedUnset(st, name)
}

// unassignedUnset reports whether name, which only a branch that may not
// have run assigned (varVal.elseUnassigned), is unset where that branch did
// not run: an environment variable Options.Unset says the environment
// lacks, which nothing else in the line may have set.
func (w *walker) unassignedUnset(st *state, name string) bool {
	if w.opt.Unset == nil || st.untracked || st.sourced || st.volatile[name] || !envName(name) || bashSets(name) {
		return false
	}
	if _, ref := st.namerefs[name]; ref {
		return false
	}
	return w.opt.Unset(name)
}

// envName reports whether name can be an environment variable's.
func envName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// bashSets reports whether bash gives name a value of its own, whatever
// the environment holds (or the walk reads it elsewhere: HOME, PWD…).
func bashSets(name string) bool {
	for _, p := range []string{"BASH", "COMP_", "READLINE_", "HIST"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "HOME", "PWD", "OLDPWD", "TMPDIR", "IFS", "PATH", "SHELL", "SHELLOPTS", "SHLVL", "PPID", "UID", "EUID",
		"GROUPS", "HOSTNAME", "HOSTTYPE", "MACHTYPE", "OSTYPE", "LINENO", "RANDOM", "SRANDOM", "SECONDS",
		"EPOCHSECONDS", "EPOCHREALTIME", "FUNCNAME", "PIPESTATUS", "DIRSTACK", "OPTARG", "OPTIND", "OPTERR",
		"REPLY", "MAPFILE", "COLUMNS", "LINES", "PS1", "PS2", "PS3", "PS4", "MAIL", "MAILCHECK", "MAILPATH",
		"CDPATH", "ENV", "FIGNORE", "GLOBIGNORE", "INPUTRC", "LANG", "TIMEFORMAT", "TMOUT", "POSIXLY_CORRECT", "_":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// lookup returns a variable's value: assignments earlier in the input first,
// then the facts in Options.
func (w *walker) lookup(st *state, name string) (string, bool) {
	if v, ok := st.vars[name]; ok {
		return v.s, v.known
	}
	switch name {
	case "HOME":
		return w.opt.Home, w.opt.Home != ""
	case "PWD":
		if st.cwdDyn || st.cwd == "" || len(st.cwdAlts) > 0 {
			return "", false // (after a cd that may not have run, one of several)
		}
		return st.cwd, true
	case "OLDPWD":
		// where the last cd left, where cd - goes back to (state.prev)
		if p := st.prev; p != nil && !p.cwdDyn && p.cwd != "" && len(p.alts) == 0 {
			return p.cwd, true
		}
		return "", false
	case "TMPDIR":
		return w.opt.Tmp, w.opt.Tmp != ""
	case "IFS":
		return " ", true
	}
	if v, ok := w.opt.Env[name]; ok {
		return v, true
	}
	return "", false
}
