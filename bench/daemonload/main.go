// Command daemonload measures a running `warden serve`: its resident memory
// idle, then /v1/check over its Unix socket from each number of concurrent
// clients in a closed loop (decisions/s, p50, p99, and its resident memory
// right after), every decision recorded durably before it is answered.
//
//	daemonload -home DIR -pid PID -clients 16,64 -duration 5s
//
// It is run by scripts/bench_proxy.sh (make bench).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

func main() {
	home := flag.String("home", "", "the warden home the daemon serves")
	pid := flag.Int("pid", 0, "the daemon's process id, for its resident memory")
	clients := flag.String("clients", "16,64", "numbers of concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "how long each measurement runs")
	flag.Parse()
	if err := run(app.Home(*home), *pid, *clients, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "daemonload:", err)
		os.Exit(1)
	}
}

func run(home app.Home, pid int, clientList string, d time.Duration) error {
	fmt.Printf("warden serve, /v1/check (tool call get_price) over the Unix socket, %v per run\n", d)
	fmt.Printf("idle: VmRSS %.1f MB\n", float64(statusKB(pid, "VmRSS:"))/1024)
	for _, f := range strings.Split(clientList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients: %q is not a positive number", f)
		}
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var (
			mu    sync.Mutex
			lats  []time.Duration
			wg    sync.WaitGroup
			first error
		)
		cpu0 := cpuTime(pid)
		start := time.Now()
		for range n {
			wg.Go(func() {
				c := app.Dial(home)
				var mine []time.Duration
				for ctx.Err() == nil {
					t0 := time.Now()
					dec, err := c.Check(context.Background(), &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price"})
					if err == nil && dec.Verdict != warden.Allow {
						err = fmt.Errorf("check = %v (%s), want allow", dec.Verdict, dec.Reason)
					}
					if err != nil {
						mu.Lock()
						first = err
						mu.Unlock()
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		cancel()
		elapsed := time.Since(start)
		cpu := cpuTime(pid) - cpu0
		if first != nil {
			return first
		}
		if len(lats) == 0 {
			return fmt.Errorf("%d clients: no decision completed", n)
		}
		slices.Sort(lats)
		fmt.Printf("%3d clients: %6.0f decisions/s, p50 %.2f ms, p99 %.2f ms, daemon CPU %.0f µs a decision; VmRSS %.1f MB right after, VmHWM %.1f MB\n",
			n, float64(len(lats))/elapsed.Seconds(), ms(lats[len(lats)/2]), ms(lats[len(lats)*99/100]),
			float64(cpu)/float64(time.Microsecond)/float64(len(lats)),
			float64(statusKB(pid, "VmRSS:"))/1024, float64(statusKB(pid, "VmHWM:"))/1024)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the user and system CPU time pid has used, from
// /proc/PID/stat in clock ticks of 10 ms (0 when it cannot be read).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// statusKB reads a field of /proc/PID/status in KiB (0 when it cannot).
func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
