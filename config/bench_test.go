package config

import (
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// BenchmarkLoad reads and checks the default policy file from disk, as every
// CLI invocation does.
func BenchmarkLoad(b *testing.B) {
	p := writeFile(b, DefaultFile())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse is Load without the file read.
func BenchmarkParse(b *testing.B) {
	data := DefaultFile()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSet rewrites one key of the default file.
func BenchmarkSet(b *testing.B) {
	p := writeFile(b, DefaultFile())
	on := false
	for b.Loop() {
		on = !on
		if err := SetKillSwitch(p, on); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkYAMLBaseline is the floor under BenchmarkParse: yaml.v3 parsing the
// default file into a node tree, with no checks.
func BenchmarkYAMLBaseline(b *testing.B) {
	data := DefaultFile()
	for b.Loop() {
		var n yaml.Node
		if err := yaml.Unmarshal(data, &n); err != nil {
			b.Fatal(err)
		}
	}
}
