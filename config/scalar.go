package config

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// setScalar stores scalar n in v when its YAML tag fits v's type, and reports
// whether it did. Tags are strict: "yes" and "true" (quoted) are strings, not
// bools, and "5" (quoted) is not a number. A string field also takes a number,
// kept exactly as written, because names such as a short recipient address
// 0xAbC or a symbol 1E3 read as numbers in YAML.
func setScalar(n *yaml.Node, v reflect.Value) bool {
	tag := n.ShortTag()
	switch v.Kind() {
	case reflect.Bool:
		b, ok := yamlBool(tag, n.Value)
		if ok {
			v.SetBool(b)
		}
		return ok
	case reflect.String:
		if tag != "!!str" && tag != "!!int" && tag != "!!float" {
			return false
		}
		v.SetString(n.Value)
		return true
	case reflect.Int, reflect.Int64:
		i, ok := yamlInt(tag, n.Value)
		if ok && !v.OverflowInt(i) {
			v.SetInt(i)
			return true
		}
	case reflect.Float64:
		f, ok := yamlFloat(tag, n.Value)
		if ok {
			v.SetFloat(f)
		}
		return ok
	}
	return false
}

// yamlBool reads a !!bool scalar: true or false in any case YAML 1.2 allows.
func yamlBool(tag, s string) (bool, bool) {
	if tag != "!!bool" {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// yamlInt reads a !!int scalar as YAML does: decimal, 0x, 0o, 0b or leading-0
// octal, with optional sign and underscores.
func yamlInt(tag, s string) (int64, bool) {
	if tag != "!!int" {
		return 0, false
	}
	i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
	return i, err == nil
}

// yamlFloat reads a !!int or !!float scalar as a number, including YAML's
// .inf, -.inf and .nan (which validation then refuses as amounts).
func yamlFloat(tag, s string) (float64, bool) {
	switch tag {
	case "!!int":
		if i, ok := yamlInt(tag, s); ok {
			return float64(i), true
		}
		u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
		return float64(u), err == nil
	case "!!float":
		switch strings.ToLower(s) {
		case ".inf", "+.inf":
			return math.Inf(1), true
		case "-.inf":
			return math.Inf(-1), true
		case ".nan":
			return math.NaN(), true
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		return f, err == nil || isRangeErr(err)
	}
	return 0, false
}

// isRangeErr reports whether err is strconv's out-of-range error, for which
// ParseFloat returns ±Inf: a value validation refuses, not a type error.
func isRangeErr(err error) bool { return errors.Is(err, strconv.ErrRange) }
