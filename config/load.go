package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
	"github.com/agentwarden/warden/internal/regfile"
	yaml "go.yaml.in/yaml/v3"
)

// Loaded is a policy file as read: the runtime Policy and what was wrong with
// the file. Build one with Load or Parse. The zero value holds no Policy, and
// its Get and List report the defaults.
type Loaded struct {
	// Policy holds only valid values: the file's where its section is valid,
	// the defaults (kept fail-closed) where it is not. Never nil.
	Policy *Policy
	// Problems lists what was wrong, in the order found; empty for a clean file.
	// Each invalid section ends with a problem saying it fell back to defaults.
	Problems []Problem
	// Path is the file read by Load; "" after Parse.
	Path string

	// files holds each section's effective file struct, indexed like sections.
	files []any
}

// fallbackMessage starts the problem that closes an invalid section's report.
const fallbackMessage = "section is invalid, so warden ignores all of it and uses the "

// Load reads and checks the policy file at path. A missing file is a
// *warden.Error with code ENotFound and a hint to run `warden init`. A file that
// is unusable as a whole — not YAML, not a mapping, more than one document, a
// missing or unsupported version — is a *warden.Error with code EInvalid, and the
// caller must then not run at all. Problems inside sections do not make Load
// fail: see Loaded.
func Load(path string) (*Loaded, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	l, err := Parse(data)
	if err != nil {
		return nil, err
	}
	l.Path = path
	return l, nil
}

// MaxFileSize bounds the policy file: the default is about 22 KB, and a
// policy of thousands of rules stays well under it. A larger file is refused
// rather than read whole, so a runaway file cannot exhaust memory.
const MaxFileSize = 16 << 20

// ReadFile reads the policy file at path as Load does, without parsing it:
// only a regular file of at most MaxFileSize bytes, failures as a
// *warden.Error (code ENotFound when there is no file there at all).
func ReadFile(path string) ([]byte, error) { return readFile(path) }

// readFile reads the policy file, turning failures into a *warden.Error. Only
// a regular file (a symlink to one is followed) of at most MaxFileSize bytes
// is read: a named pipe, a device or a directory is refused at once instead
// of blocking or reading without end, so a hook never hangs past its host's
// timeout (which lets the call through) on a broken home.
func readFile(path string) ([]byte, error) {
	f, fi, err := regfile.Open(path, os.O_RDONLY, 0, true)
	if err != nil {
		var nr *regfile.NotRegularError
		if errors.As(err, &nr) {
			return nil, warden.Errorf(warden.EInvalid, "the policy file %s is not a regular file but %s", path, regfile.Kind(nr.Mode)).
				WithHint("move it aside and run `warden init` to write the default policy, or put your policy file there")
		}
		if target, lerr := os.Readlink(path); lerr == nil && !errors.Is(err, fs.ErrPermission) {
			// The user's policy file, gone (a dotfiles checkout missing, a
			// loop): not a home without one, which callers may answer with
			// the embedded default or `warden init`.
			return nil, warden.Errorf(warden.EInvalid, "the policy file %s is a symlink to %s, which leads to no file warden can read (%v)", path, target, errors.Unwrap(err)).
				WithHint("restore " + target + " (or point the link at your policy file); to start over, remove the link and run `warden init`")
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, warden.Errorf(warden.ENotFound, "no policy file at %s", path).
				WithHint("run `warden init` to write the default policy").Wrap(err)
		}
		return nil, warden.Errorf(warden.EInvalid, "cannot read the policy file %s", path).
			WithHint("check that the file is readable by this user").Wrap(err)
	}
	defer f.Close()
	if fi.Size() > MaxFileSize {
		return nil, warden.Errorf(warden.EInvalid, "the policy file %s has %d bytes, more than the %d a policy file may have", path, fi.Size(), MaxFileSize).
			WithHint("it is not a policy file warden wrote: move it aside and run `warden init`, or restore your policy from a backup")
	}
	data, err := regfile.ReadAll(f, MaxFileSize)
	if errors.Is(err, regfile.ErrTooLarge) { // it grew while being read
		return nil, warden.Errorf(warden.EInvalid, "the policy file %s has more than the %d bytes a policy file may have", path, MaxFileSize).
			WithHint("it is not a policy file warden wrote: move it aside and run `warden init`, or restore your policy from a backup")
	}
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "cannot read the policy file %s", path).
			WithHint("check that the file is readable by this user").Wrap(err)
	}
	return data, nil
}

// Validate loads the file at path like Load and also fails, with a
// *warden.Error of code EInvalid, when the file has any problem; the returned
// Loaded then lists them. It backs `warden config validate`.
func Validate(path string) (*Loaded, error) {
	l, err := Load(path)
	if err != nil {
		return nil, err
	}
	if n := len(l.Problems); n > 0 {
		noun := "problems"
		if n == 1 {
			noun = "problem"
		}
		return l, warden.Errorf(warden.EInvalid, "%s has %d %s", FileName, n, noun).
			WithHint("fix the keys named above; until then warden uses the defaults for those sections")
	}
	return l, nil
}

// Parse checks the contents of a policy file. It returns an error exactly when
// Load would for the same bytes; see Load.
func Parse(data []byte) (*Loaded, error) {
	l, _, err := parse(data)
	return l, err
}

// parse is Parse that also returns the document's node tree, for Set.
func parse(data []byte) (*Loaded, *yaml.Node, error) {
	doc, err := decodeDocument(data)
	if err != nil {
		return nil, nil, err
	}
	var root *yaml.Node
	if doc != nil && len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	if root != nil && isNull(root) {
		root = nil
	}
	if root != nil && root.Kind != yaml.MappingNode {
		return nil, nil, warden.Errorf(warden.EInvalid, "%s:%d: the file must be a mapping of sections, not %s", FileName, root.Line, describeNode(root)).
			WithHint("start the file with `version: 1`; `warden init` writes a commented default")
	}
	if err := checkVersion(root); err != nil {
		return nil, nil, err
	}

	top := &checker{}
	raw := make([][]*yaml.Node, len(sections))
	keyLine := make([]int, len(sections))
	if root != nil {
		top.pairs(root, "", func(k, v *yaml.Node) {})
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || k.Value == "version" {
				continue
			}
			if s := sectionIndex(k.Value); s >= 0 {
				if raw[s] == nil {
					keyLine[s] = k.Line
				}
				raw[s] = append(raw[s], v)
				continue
			}
			top.add(k.Value, k.Line, unknownTopKey(k.Value))
		}
	}

	l := &Loaded{Policy: &Policy{}, files: make([]any, len(sections))}
	for _, p := range top.problems {
		// A duplicated section is that section's problem; the rest are top-level.
		if s := sectionIndex(p.Key); s >= 0 && len(raw[s]) > 1 {
			p.Section = p.Key
		}
		l.Problems = append(l.Problems, p)
	}
	for i, s := range sections {
		var n *yaml.Node
		if len(raw[i]) == 1 {
			n = raw[i][0]
		}
		c := &checker{section: s.name(), node: n}
		f, ok := any(nil), len(raw[i]) <= 1
		if ok {
			f, ok = s.load(n, c)
		}
		if !ok {
			// Strict-walk problems come in file order, value checks in field
			// order; report them all in file order.
			slices.SortStableFunc(c.problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
			var note string
			f, note = s.fallback(raw[i])
			msg := fallbackMessage + s.name() + " defaults"
			if note != "" {
				msg += "; " + note
			}
			c.add(s.name(), keyLine[i], msg)
		}
		s.apply(f, l.Policy)
		l.files[i] = f
		l.Problems = append(l.Problems, c.problems...)
	}
	return l, doc, nil
}

// unknownTopKey is the message for an unknown top-level key: a close section
// name, or a section's field written at the top by mistake.
func unknownTopKey(name string) string {
	if s := suggest(name, topLevelKeys()); s != "" {
		return "unknown section, ignored; did you mean " + s + "?"
	}
	for _, s := range sections {
		for _, f := range fieldNames(s.fileType()) {
			if fold(f) == fold(name) {
				return "unknown section, ignored; did you mean " + s.name() + "." + f + " (inside the " + s.name() + " section)?"
			}
		}
	}
	return "unknown section, ignored; want one of " + strings.Join(topLevelKeys(), ", ")
}

// decodeDocument reads data as exactly one YAML document. It returns nil for
// an empty file. Any YAML error, or a second document, makes the file unusable.
func decodeDocument(data []byte) (*yaml.Node, error) {
	doc, second, err := decodeOne(data)
	switch {
	case err != nil:
		return nil, syntaxError(err)
	case second > 0:
		return nil, warden.Errorf(warden.EInvalid, "%s:%d: a second YAML document starts here; the file must hold exactly one", FileName, second).
			WithHint("remove the `---` line and merge the documents")
	}
	return doc, nil
}

// decodeOne reads the first YAML document in data (nil when there is none)
// and reports the line where a second one starts, or 0. A panic inside the
// YAML library becomes an error, so hostile input cannot crash the gate.
func decodeOne(data []byte) (doc *yaml.Node, second int, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, second, err = nil, 0, fmt.Errorf("YAML parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var d yaml.Node
	if err := dec.Decode(&d); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return &d, max(extra.Line, 1), nil
	case !errors.Is(err, io.EOF):
		return nil, 0, err
	}
	return &d, 0, nil
}

func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return warden.Errorf(warden.EInvalid, "%s is not valid YAML: %s", FileName, clip2(msg)).
		WithHint("fix the line named; `warden config validate` checks the file")
}

// clip2 keeps a library message to one readable line of at most 200 runes.
func clip2(s string) string {
	return clip.String(strings.ReplaceAll(s, "\n", " "), 200)
}

// checkVersion requires exactly one `version: 1` at the top of root.
func checkVersion(root *yaml.Node) error {
	hint := fmt.Sprintf("this warden reads `version: %d` files; `warden init` writes one", Version)
	var found *yaml.Node
	if root != nil {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value != "version" {
				continue
			}
			if found != nil {
				return warden.Errorf(warden.EInvalid, "%s:%d: version is defined twice, on lines %d and %d", FileName, k.Line, found.Line, v.Line).WithHint(hint)
			}
			found = v
		}
	}
	if found == nil {
		return warden.Errorf(warden.EInvalid, "%s: version is missing; supported versions: %d", FileName, Version).WithHint(hint)
	}
	if v, ok := yamlInt(found.ShortTag(), found.Value); found.Kind != yaml.ScalarNode || !ok || v != Version {
		return warden.Errorf(warden.EInvalid, "%s:%d: version %s is not supported; supported versions: %d", FileName, found.Line, valueText(found), Version).WithHint(hint)
	}
	return nil
}

// valueText shows what the file holds at n, for a message.
func valueText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		return clip.String(n.Value, maxShown)
	}
	return describeNode(n)
}
