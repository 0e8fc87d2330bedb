// Command coldstart times whole processes that read stdin, which the
// hyperfine on Debian 12 cannot feed: it runs each command in turn, round after
// round, so they share the machine's conditions, and prints each command's
// median and p90 and its ratio to the first command's median.
//
//	coldstart -runs 300 -stdin payload.json -- bin/hello -- bin/warden hook claude
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 200, "runs of each command")
	warmup := flag.Int("warmup", 20, "untimed runs of each command first")
	stdin := flag.String("stdin", "", "file fed to every command's stdin")
	flag.Parse()
	cmds := split(flag.Args())
	if len(cmds) == 0 {
		fmt.Fprintln(os.Stderr, "usage: coldstart [-runs N] [-stdin FILE] -- CMD ARGS... [-- CMD ARGS...]")
		os.Exit(2)
	}
	var input []byte
	if *stdin != "" {
		var err error
		if input, err = os.ReadFile(*stdin); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	times := make([][]time.Duration, len(cmds))
	for round := 0; round < *warmup+*runs; round++ {
		for i, argv := range cmds {
			c := exec.Command(argv[0], argv[1:]...)
			c.Stdin = bytes.NewReader(input)
			start := time.Now()
			if err := c.Run(); err != nil {
				if _, ok := err.(*exec.ExitError); !ok {
					fmt.Fprintf(os.Stderr, "%s: %v\n", strings.Join(argv, " "), err)
					os.Exit(1)
				}
			}
			if round >= *warmup {
				times[i] = append(times[i], time.Since(start))
			}
		}
	}
	base := median(times[0])
	for i, argv := range cmds {
		ts := times[i]
		slices.Sort(ts)
		fmt.Printf("%-60s median %7.3f ms  p90 %7.3f ms  %5.2fx\n", strings.Join(argv, " "),
			ms(median(ts)), ms(ts[len(ts)*9/10]), float64(median(ts))/float64(base))
	}
}

func split(args []string) [][]string {
	var out [][]string
	var cur []string
	for _, a := range args {
		if a == "--" {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, a)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
