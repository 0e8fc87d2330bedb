//go:build amd64 || arm64

package sandbox

import (
	"errors"
	"os"
	"testing"
)

// TestSpawnerRefusesMalformedRequests: a request the spawner cannot read,
// or one without the streams an init needs, starts nothing, says so, and
// closes every descriptor that came with it.
func TestSpawnerRefusesMalformedRequests(t *testing.T) {
	for name, msg := range map[string]string{
		"not JSON":     `{"Path":`,
		"no arguments": `{"Path":"/bin/true","Args":[]}`,
		"no path":      `{"Args":["x"]}`,
		"one stream":   `{"Path":"/bin/true","Args":["x"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			files := []*os.File{w}
			if name != "one stream" {
				w2, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, w2)
			}
			reply, pidfd := spawnOne([]byte(msg), files)
			if reply.Err == "" || reply.Pid != 0 || pidfd != -1 {
				t.Fatalf("spawnOne(%s) = %+v, pidfd %d; want a refusal", msg, reply, pidfd)
			}
			for _, f := range files {
				if err := f.Close(); !errors.Is(err, os.ErrClosed) {
					t.Errorf("a descriptor that came with the request is still open (close: %v)", err)
				}
			}
		})
	}
}
