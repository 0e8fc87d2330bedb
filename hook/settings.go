package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ordered is a JSON object that keeps its keys in file order, so rewriting a
// settings file changes only what warden touches. Values stay raw.
type ordered struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseOrdered decodes one JSON object. Duplicate keys, anything that is not
// an object and data after it are errors.
func parseOrdered(data []byte) (*ordered, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &ordered{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed object key")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err)
		}
		if _, dup := o.vals[key]; dup {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Errorf("malformed JSON at byte %d: %v", syn.Offset, syn)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("the JSON ends early")
	}
	return err
}

func newOrdered() *ordered { return &ordered{vals: map[string]json.RawMessage{}} }

func (o *ordered) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set sets key, appending it when new.
func (o *ordered) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *ordered) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *ordered) len() int { return len(o.keys) }

// MarshalJSON encodes the object with its keys in order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(o.vals[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// encode marshals v (an *ordered or a value holding raw parts) indented with
// two spaces and a final newline, HTML characters unescaped.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(buf.Bytes()), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// hookCommand reports whether command contains `warden hook <host>` as whole
// words, however the path to warden is quoted (quotes and a ".exe" suffix are
// ignored).
func hookCommand(command, host string) bool {
	c := strings.NewReplacer(`'`, "", `"`, "", ".exe", "").Replace(command)
	return strings.Contains(c+" ", "warden hook "+host+" ")
}

// entryCommand returns the command of a hook entry, or "" when it has none.
func entryCommand(raw json.RawMessage) string {
	var e struct {
		Command any `json:"command"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	s, _ := e.Command.(string)
	return s
}
