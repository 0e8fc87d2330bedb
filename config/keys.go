package config

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
)

// KV is one dotted key and its effective value, as listed by Loaded.List. Value
// holds plain Go values: bool, int, float64, string, []any, map[string]any.
type KV struct {
	Key   string
	Value any
}

// target is where a dotted key points in the schema.
type target struct {
	key  string       // the key as given
	sec  int          // index in sections; -1 for version
	path []string     // keys under the section; for a map entry the last is the entry's name
	typ  reflect.Type // the type of the value at the key
	want string       // what the value must be, in words
}

// resolve finds key in the schema. Unknown keys are *warden.Error EInvalid,
// with a suggestion when a known key is close. A map field takes the rest of
// the key as one entry name, so tools.tiers.mcp.github names the tool
// "mcp.github".
func resolve(key string) (target, error) {
	t := target{key: key, sec: -1}
	segs := strings.Split(key, ".")
	notKey := func() error {
		return warden.Errorf(warden.EInvalid, "%q is not a key; want a dotted key such as safety.dailySpendCap", key).
			WithHint("`warden config list` shows every key")
	}
	if segs[0] == "" {
		return t, notKey()
	}
	if segs[0] == "version" && len(segs) == 1 {
		t.typ, t.want = reflect.TypeFor[int](), "a whole number"
		return t, nil
	}
	t.sec = sectionIndex(segs[0])
	if t.sec < 0 {
		return t, unknownKeyError(key, segs[0], "", topLevelKeys())
	}
	typ := sections[t.sec].fileType()
	parent, elem := segs[0], ""
	for i := 1; i < len(segs); i++ {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Struct:
			if segs[i] == "" {
				return t, notKey()
			}
			f, ok := fieldNamed(typ, segs[i])
			if !ok {
				return t, unknownKeyError(key, segs[i], parent, fieldNames(typ))
			}
			t.path = append(t.path, segs[i])
			typ, t.want = f.typ, f.want
			elem = f.elem
			parent += "." + segs[i]
		case reflect.Map:
			t.path = append(t.path, strings.Join(segs[i:], "."))
			t.typ, t.want = typ.Elem(), elem
			if t.want == "" {
				t.want = describe(t.typ)
			}
			return t, nil
		case reflect.Slice:
			return t, warden.Errorf(warden.EInvalid, "%s is a list; it has no key %q", parent, segs[i]).
				WithHint("get or set " + parent + " as a whole, e.g. a JSON list")
		default:
			return t, warden.Errorf(warden.EInvalid, "%s is a single value; it has no key %q", parent, segs[i])
		}
	}
	t.typ = typ
	if t.want == "" {
		t.want = describe(typ)
	}
	return t, nil
}

func unknownKeyError(key, name, parent string, known []string) error {
	full := func(s string) string { return joinKey(parent, s) }
	msg := "unknown key " + key
	if s := suggest(name, known); s != "" {
		msg += "; did you mean " + full(s) + "?"
	} else {
		ks := make([]string, len(known))
		for i, k := range known {
			ks[i] = full(k)
		}
		msg += "; want one of " + strings.Join(ks, ", ")
	}
	return warden.Errorf(warden.EInvalid, "%s", msg).WithHint("`warden config list` shows every key")
}

// Get returns the effective value of a dotted key: the file's value where its
// section is valid, the default otherwise. A section or a map (such as
// tools.tiers) comes back whole as a map[string]any, a list as []any; see KV
// for the value types. An unknown key, or a map entry that is not set (such as
// a tool with no tier), is a *warden.Error.
func (l *Loaded) Get(key string) (any, error) {
	t, err := resolve(key)
	if err != nil {
		return nil, err
	}
	if t.sec < 0 {
		return Version, nil
	}
	v := reflect.ValueOf(l.file(t.sec))
	for i, name := range t.path {
		v = reflect.Indirect(v)
		if !v.IsValid() {
			// An optional mapping that is absent, such as stopLoss.defaultRule.
			return nil, warden.Errorf(warden.ENotFound, "%s is not set", keyText(sections[t.sec].name(), anys(t.path[:i])))
		}
		if v.Kind() == reflect.Map {
			v = v.MapIndex(reflect.ValueOf(name))
			if !v.IsValid() {
				parent := keyText(sections[t.sec].name(), anys(t.path[:i]))
				err := warden.Errorf(warden.ENotFound, "%s has no entry %q", parent, name)
				if parent == "tools.tiers" {
					err.Hint = "a tool with no tier is tier " + itoa(int(warden.DefaultTier))
				}
				return nil, err
			}
			continue
		}
		f, _ := fieldNamed(v.Type(), name)
		v = v.Field(f.index)
	}
	return plain(v), nil
}

// List returns every leaf key in dotted form with its effective value, in
// file order: version first, then each section's fields; map entries are
// listed one by one (tools.tiers.NAME, sorted by name) and lists as a whole.
func (l *Loaded) List() []KV {
	kvs := []KV{{Key: "version", Value: Version}}
	for i, s := range sections {
		kvs = listValue(kvs, s.name(), reflect.ValueOf(l.file(i)))
	}
	return kvs
}

// file returns section i's effective file struct; the defaults for a Loaded
// that was not built by Load or Parse.
func (l *Loaded) file(i int) any {
	if i < len(l.files) && l.files[i] != nil {
		return l.files[i]
	}
	return sections[i].defaults()
}

func listValue(kvs []KV, key string, v reflect.Value) []KV {
	v = reflect.Indirect(v)
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			if fv.Kind() == reflect.Pointer && fv.IsNil() {
				continue
			}
			kvs = listValue(kvs, key+"."+f.name, fv)
		}
	case reflect.Map:
		if v.Len() == 0 {
			return append(kvs, KV{Key: key, Value: plain(v)})
		}
		names := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
		slices.Sort(names)
		for _, k := range names {
			kvs = append(kvs, KV{Key: key + "." + k, Value: plain(v.MapIndex(reflect.ValueOf(k)))})
		}
	default:
		kvs = append(kvs, KV{Key: key, Value: plain(v)})
	}
	return kvs
}

// plain turns a file struct value into plain Go values keyed by file keys.
func plain(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	case reflect.Struct:
		m := make(map[string]any)
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			if fv.Kind() == reflect.Pointer && fv.IsNil() {
				continue
			}
			m[f.name] = plain(fv)
		}
		return m
	case reflect.Map:
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[it.Key().String()] = plain(it.Value())
		}
		return m
	case reflect.Slice:
		s := make([]any, v.Len())
		for i := range s {
			s[i] = plain(v.Index(i))
		}
		return s
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int64:
		return int(v.Int())
	case reflect.Float64:
		return v.Float()
	case reflect.String:
		return v.String()
	}
	return nil
}

// FormatValue renders a value from Get or List as compact JSON, which Set
// accepts back as a VALUE.
func FormatValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
