package config

import (
	"reflect"
	"strings"

	"github.com/agentwarden/warden/internal/clip"
	yaml "go.yaml.in/yaml/v3"
)

// The strict decoder walks a section's YAML node tree against its file
// struct and stores each value as it goes, so that every unknown key,
// duplicate key and wrong type is reported with its dotted key and exact line,
// and no YAML value reaches a field without a type check. It reads scalars
// itself (scalar.go) rather than through yaml's Decode, which would, for
// example, truncate 2.5 to a tier of 2.

// field is one yaml-tagged field of a file struct.
type field struct {
	name  string       // the key in the file
	index int          // the struct field index
	typ   reflect.Type // the field's type
	want  string       // what a value must be, from the want tag; "" to derive it
	elem  string       // what each element of a list or map must be, from the elem tag
}

// fieldsOf returns the yaml-tagged fields of struct type t, in order.
func fieldsOf(t reflect.Type) []field {
	fs := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		if f, ok := fieldAt(t, i); ok {
			fs = append(fs, f)
		}
	}
	return fs
}

// fieldAt returns field i of struct type t, if it has a yaml key.
func fieldAt(t reflect.Type, i int) (field, bool) {
	sf := t.Field(i)
	name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
	if name == "" || name == "-" {
		return field{}, false
	}
	return field{name: name, index: i, typ: sf.Type, want: sf.Tag.Get("want"), elem: sf.Tag.Get("elem")}, true
}

// fieldNamed returns the field of struct type t whose key is name.
func fieldNamed(t reflect.Type, name string) (field, bool) {
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag == name && name != "" && name != "-" {
			return fieldAt(t, i)
		}
	}
	return field{}, false
}

// fieldNames returns the keys of struct type t.
func fieldNames(t reflect.Type) []string {
	fs := fieldsOf(t)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// decode checks n against the type of v and stores its value in v, which must
// be settable; a map already in v keeps the entries n does not name. key is n's
// full dotted key; want describes what n must be ("" derives it from the type)
// and elem what each element of a list or map must be. Problems are recorded
// in c, and v is then only partly set.
func (c *checker) decode(n *yaml.Node, v reflect.Value, key, want, elem string) {
	t := v.Type()
	if want == "" {
		want = describe(t)
	}
	if n.Kind == yaml.AliasNode {
		c.add(key, n.Line, "aliases (*"+clip.String(n.Value, maxShown)+") are not supported in "+FileName+"; write the value out")
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			c.wrongType(n, key, want)
			return
		}
		p := reflect.New(t.Elem())
		c.decode(n, p.Elem(), key, want, elem)
		v.Set(p)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.wrongType(n, key, want)
			return
		}
		c.pairs(n, key, func(k, val *yaml.Node) {
			if f, ok := fieldNamed(t, k.Value); ok {
				c.decode(val, v.Field(f.index), joinKey(key, k.Value), f.want, f.elem)
				return
			}
			c.add(joinKey(key, k.Value), k.Line, unknownKey(key, k.Value, fieldNames(t)))
		})
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.wrongType(n, key, want)
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMapWithSize(t, len(n.Content)/2))
		}
		c.pairs(n, key, func(k, val *yaml.Node) {
			e := reflect.New(t.Elem()).Elem()
			c.decode(val, e, joinKey(key, k.Value), elem, "")
			v.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), e)
		})
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.wrongType(n, key, want)
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			c.decode(item, s.Index(i), key+"["+itoa(i)+"]", elem, "")
		}
		v.Set(s)
	default:
		if n.Kind != yaml.ScalarNode || !setScalar(n, v) {
			c.wrongType(n, key, want)
		}
	}
}

// pairs checks that every key of mapping n is a plain name and appears once,
// and calls fn for the first occurrence of each key.
func (c *checker) pairs(n *yaml.Node, key string, fn func(k, v *yaml.Node)) {
	var seen map[string]int
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind == yaml.AliasNode:
			c.add(key, k.Line, "aliases (*"+clip.String(k.Value, maxShown)+") are not supported in "+FileName+"; write the key out")
			continue
		case k.Kind != yaml.ScalarNode:
			c.add(key, k.Line, "got "+describeNode(k)+" as a key; want a name")
			continue
		case k.ShortTag() == "!!merge":
			c.add(joinKey(key, k.Value), k.Line, "merge keys (<<) are not supported in "+FileName+"; write the keys out")
			continue
		case k.ShortTag() != "!!str":
			c.add(joinKey(key, k.Value), k.Line, "got "+describeNode(k)+" as a key; want a name (quote it if it is one)")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			c.add(joinKey(key, k.Value), k.Line, "defined twice, on lines "+itoa(first)+" and "+itoa(k.Line)+"; keep one")
			continue
		}
		if seen == nil {
			seen = make(map[string]int, len(n.Content)/2)
		}
		seen[k.Value] = k.Line
		fn(k, v)
	}
}

func (c *checker) wrongType(n *yaml.Node, key, want string) {
	c.add(key, n.Line, "got "+describeNode(n)+"; want "+want)
}

// unknownKey is the message for key name under parent, which allows known.
func unknownKey(parent, name string, known []string) string {
	if s := suggest(name, known); s != "" {
		return "unknown key; did you mean " + parent + "." + s + "?"
	}
	return "unknown key; want one of " + strings.Join(known, ", ")
}

// describe says in words what a value of type t is.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return describe(t.Elem())
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list of " + plural(t.Elem())
	case reflect.Map:
		return "a mapping of names to " + plural(t.Elem())
	}
	return "a mapping"
}

func plural(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return plural(t.Elem())
	case reflect.Bool:
		return "true/false values"
	case reflect.String:
		return "strings"
	case reflect.Int, reflect.Int64:
		return "whole numbers"
	case reflect.Float64:
		return "numbers"
	case reflect.Slice:
		return "lists"
	}
	return "mappings"
}

// describeNode says in words what the file holds at n.
func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch tag := n.ShortTag(); tag {
		case "!!null":
			return "an empty value"
		case "!!str":
			return quote(n.Value) + " (a string)"
		case "!!bool":
			return clip.String(n.Value, maxShown) + " (true/false)"
		case "!!int", "!!float":
			return clip.String(n.Value, maxShown) + " (a number)"
		default:
			return quote(n.Value) + " (tagged " + clip.String(tag, maxShown) + ")"
		}
	}
	return "nothing"
}
