package config

import (
	"reflect"

	yaml "go.yaml.in/yaml/v3"
)

// FileName is the policy file's name inside $WARDEN_HOME; problems are reported
// against it.
const FileName = "warden.yaml"

// Version is the only file format version this package reads and writes.
const Version = 1

// sections lists the file's sections in the order they are loaded, listed and
// documented. A new section is one file (its file struct, defaults, check and
// apply) plus one line here.
var sections = []section{
	safetySection,
	toolsSection,
	shellSection,
	filesystemSection,
	sandboxSection,
	networkSection,
	approvalsSection,
	sizingSection,
	exposureSection,
	slippageSection,
	stopLossSection,
	tradeSection,
	signingSection,
	injectSection,
	storeSection,
}

// section is one top-level section of warden.yaml.
type section interface {
	// name is the section's top-level key.
	name() string
	// fileType is the section's file struct type, for the strict walk and for
	// resolving dotted keys.
	fileType() reflect.Type
	// defaults returns a fresh, valid file struct holding the defaults.
	defaults() any
	// load strictly checks n (the section's value; nil when absent), decodes it
	// over the defaults, and validates and normalises the result. It returns
	// ok=false, having recorded problems in c, when the section is invalid.
	load(n *yaml.Node, c *checker) (file any, ok bool)
	// fallback returns the file struct to use when the section is invalid: the
	// defaults, adjusted where failing closed demands it. raw holds every value
	// the file gives the section (more than one when the key is duplicated).
	// note explains any adjustment, or is empty.
	fallback(raw []*yaml.Node) (file any, note string)
	// apply writes a valid file struct's values into p.
	apply(file any, p *Policy)
}

// sectionDef implements section for a file struct type F.
type sectionDef[F any] struct {
	key string
	// defaultsOf returns a fresh file struct holding the section's defaults.
	defaultsOf func() *F
	// check validates f, recording problems in c, and normalises it in place
	// (e.g. token symbols to upper case).
	check func(f *F, c *checker)
	// toRuntime writes a valid, normalised f into p.
	toRuntime func(f *F, p *Policy)
	// failClosed, if set, adjusts the defaults f used for an invalid section so
	// that falling back never loosens a switch the file turned on; it returns a
	// note for the problem report, or "".
	failClosed func(raw []*yaml.Node, f *F) string
}

func (s *sectionDef[F]) name() string           { return s.key }
func (s *sectionDef[F]) fileType() reflect.Type { return reflect.TypeFor[F]() }
func (s *sectionDef[F]) defaults() any          { return s.defaultsOf() }
func (s *sectionDef[F]) apply(f any, p *Policy) { s.toRuntime(f.(*F), p) }

func (s *sectionDef[F]) load(n *yaml.Node, c *checker) (any, bool) {
	f := s.defaultsOf()
	if n == nil || isNull(n) {
		return f, true
	}
	before := len(c.problems)
	c.decode(n, reflect.ValueOf(f).Elem(), s.key, "", "")
	if len(c.problems) > before {
		return nil, false
	}
	s.check(f, c)
	if len(c.problems) > before {
		return nil, false
	}
	return f, true
}

func (s *sectionDef[F]) fallback(raw []*yaml.Node) (any, string) {
	f := s.defaultsOf()
	note := ""
	if s.failClosed != nil {
		note = s.failClosed(raw, f)
	}
	return f, note
}

// sectionIndex returns the index in sections of the section named key, or -1.
func sectionIndex(key string) int {
	for i, s := range sections {
		if s.name() == key {
			return i
		}
	}
	return -1
}

// topLevelKeys returns every key allowed at the top of the file.
func topLevelKeys() []string {
	keys := make([]string, 0, len(sections)+1)
	keys = append(keys, "version")
	for _, s := range sections {
		keys = append(keys, s.name())
	}
	return keys
}

// isNull reports whether n is an empty scalar (absent value, ~ or null).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
