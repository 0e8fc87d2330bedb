package shellguard

import (
	"strings"

	"github.com/agentwarden/warden/shellguard/walk"
)

// grammar is a compiled option grammar. It is written as a string of
// space-separated groups; a group lists the spellings of one option
// separated by commas ("r,R,recursive"); the last spelling names the option.
// A trailing "=" means the option takes a value (attached "-n5", "--n=5" or
// separate "-n 5"); "=?" means an option whose value is optional and only
// ever attached ("--backup=x", "-i.bak").
type grammar struct {
	short map[byte]optDef
	long  map[string]optDef
	longs []string // for prefix matching
}

type optDef struct {
	name     string
	arg      bool // takes a value
	optional bool // value only with "="
}

func compileGrammar(src string) *grammar {
	g := &grammar{short: map[byte]optDef{}, long: map[string]optDef{}}
	for _, grp := range strings.Fields(src) {
		def := optDef{}
		if s, ok := strings.CutSuffix(grp, "=?"); ok {
			grp, def.arg, def.optional = s, true, true
		} else if s, ok := strings.CutSuffix(grp, "="); ok {
			grp, def.arg = s, true
		}
		names := strings.Split(grp, ",")
		def.name = names[len(names)-1]
		for _, n := range names {
			if len(n) == 1 {
				g.short[n[0]] = def
			} else {
				g.long[n] = def
				g.longs = append(g.longs, n)
			}
		}
	}
	return g
}

// parsed is argv split by a grammar.
type parsed struct {
	flags map[string][]string // option name → values ("" for none)
	// words holds the values as words, for judging one that names a
	// file (a value attached to its option, "-fFILE", keeps the option
	// word's Dynamic and Glob).
	words    map[string][]walk.Word
	operands []walk.Word
	// unknown holds options the grammar does not know; ambiguous is set
	// when a long-option abbreviation matches several options.
	unknown   []string
	ambiguous bool
	// dynamicOpt is set when a dynamic word could be an option.
	dynamicOpt bool
}

func (p *parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.flags[n]; ok {
			return true
		}
	}
	return false
}

func (p *parsed) value(name string) string {
	if v := p.flags[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// parseArgs splits args (without the program name) by g. With posix set,
// the first operand ends the options (as for commands that take a command).
func parseArgs(g *grammar, args []walk.Word, posix bool) parsed {
	p := parsed{flags: map[string][]string{}, words: map[string][]walk.Word{}}
	set := func(n string, v walk.Word) {
		p.flags[n] = append(p.flags[n], v.Value)
		p.words[n] = append(p.words[n], v)
	}
	// attached is the value v cut from the option word w.
	attached := func(w walk.Word, v string) walk.Word {
		return walk.Word{Value: v, Dynamic: w.Dynamic, Glob: w.Glob, Quoted: w.Quoted, Span: w.Span, Raw: w.Raw}
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		a := w.Value
		if w.Dynamic && (a == "" || strings.HasPrefix(a, "-") || w.Prefix == "") {
			if strings.HasPrefix(w.Prefix, "-") || w.Prefix == "" {
				p.dynamicOpt = true
			}
			p.operands = append(p.operands, w)
			continue
		}
		if a == "--" {
			p.operands = append(p.operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			p.operands = append(p.operands, w)
			if posix {
				p.operands = append(p.operands, args[i+1:]...)
				break
			}
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			def, ok := g.lookupLong(name)
			if !ok {
				if def.name == "?ambiguous" {
					p.ambiguous = true
				}
				p.unknown = append(p.unknown, a)
				continue
			}
			switch {
			case hasVal:
				set(def.name, attached(w, val))
			case def.arg && !def.optional:
				if i+1 < len(args) {
					i++
					set(def.name, args[i])
				} else {
					set(def.name, walk.Word{})
				}
			default:
				set(def.name, walk.Word{})
			}
			continue
		}
		// Short cluster.
		for j := 1; j < len(a); j++ {
			def, ok := g.short[a[j]]
			if !ok {
				p.unknown = append(p.unknown, "-"+a[j:j+1])
				continue
			}
			if def.arg && def.optional {
				// An optional value is only ever attached (sed -i.bak).
				set(def.name, attached(w, a[j+1:]))
				break
			}
			if def.arg {
				if j+1 < len(a) {
					set(def.name, attached(w, a[j+1:]))
				} else if i+1 < len(args) {
					i++
					set(def.name, args[i])
				} else {
					set(def.name, walk.Word{})
				}
				break
			}
			set(def.name, walk.Word{})
		}
	}
	return p
}

// lookupLong resolves a long option or a unique prefix of one, as GNU
// getopt_long does. An ambiguous prefix fails (name "?ambiguous").
func (g *grammar) lookupLong(name string) (optDef, bool) {
	if d, ok := g.long[name]; ok {
		return d, true
	}
	var found optDef
	n := 0
	for _, l := range g.longs {
		if strings.HasPrefix(l, name) {
			d := g.long[l]
			if n == 0 || d.name != found.name {
				n++
				found = d
			}
		}
	}
	switch n {
	case 1:
		return found, true
	case 0:
		return optDef{}, false
	}
	return optDef{name: "?ambiguous"}, false
}
