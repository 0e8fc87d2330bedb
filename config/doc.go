// Package config reads and writes warden's policy file, $WARDEN_HOME/warden.yaml.
//
// The file is versioned (version: 1) and decoded strictly: an unknown or
// misspelled key, a duplicate key or a value of the wrong type is reported with
// its dotted key and line, and with a "did you mean" suggestion when a known key
// is close. Values are then validated; every message says what is allowed.
//
// The file is split into sections (safety, tools, …). A problem inside a section
// makes warden ignore that whole section and use its defaults, and the problem is
// reported in Loaded.Problems so the caller can warn and audit it; other sections
// still load. A file that cannot be read as a whole (bad YAML, a missing or
// unsupported version) is an error, and the caller must then not run at all.
// Either way warden never runs on an invalid value.
//
// The file struct of each section (yaml tags, exactly as written in the file) is
// kept apart from the runtime struct the gate reads (Policy). Adding a section
// means adding one file with its file struct, defaults, validation and
// conversion, and one line in the sections table (schema.go).
//
// Set edits one dotted key in place, keeping the file's comments and order, and
// refuses a change that would make its section invalid. Writes are atomic.
package config
