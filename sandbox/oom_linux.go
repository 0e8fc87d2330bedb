//go:build amd64 || arm64

package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// The memory cap is the whole sandbox's cgroup: the init, a world's
// launcher and the commands share it. When it is hit the kernel kills the
// process with the largest footprint, and a Go init that has served many
// commands can outweigh a command that has only begun to fill the cap
// (measured: an init of 37 MB beside a python3 of 33 MB under 64 MB). Its
// death loses the run's answer, and a world's with it. So every command
// starts with an OOM score raised by what the init may weigh
// (helperFootprint), counted against the cap; raising one's own score
// needs no privilege, and the helpers keep theirs.

// helperFootprint is the resident size an init or launcher is allowed for
// in the kernel's choice: a command is chosen before one as heavy as this
// with nothing of its own.
const helperFootprint = 64 << 20

// oomScoreAdj is the score for commands under a memory cap of limit bytes:
// helperFootprint in thousandths of the cap, so it is large under a small
// cap and small under a large one, where the host's own OOM choice
// (counted against the whole machine) should barely move.
func oomScoreAdj(limit int64) int {
	if limit <= 0 {
		return 0
	}
	return int(min(1000, (helperFootprint*1000+limit-1)/limit))
}

// oomScore is a process's own /proc/self/oom_score_adj, opened before its
// thread is restricted (Landlock would refuse the open later; a write to
// an open file it does not check), with the score it had then.
type oomScore struct {
	f   *os.File
	own string
}

// openOOMScore opens this process's score; nil where it cannot (no /proc),
// and the commands then start with the process's own.
func openOOMScore() *oomScore {
	f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	b := make([]byte, 16)
	n, err := f.Read(b)
	if err != nil {
		f.Close()
		return nil
	}
	return &oomScore{f: f, own: strings.TrimSpace(string(b[:n]))}
}

// starting runs start (a fork of a command) with this process's score
// raised by adj, and puts its own back after: the command keeps the raised
// one. A score that cannot be raised leaves the command with the
// process's own.
func (o *oomScore) starting(adj int, start func()) {
	if o == nil || adj == 0 {
		start()
		return
	}
	own, err := strconv.Atoi(o.own)
	if err != nil {
		start()
		return
	}
	raised := o.set(strconv.Itoa(min(1000, own+adj)))
	start()
	if raised {
		// Lowering back to a score one had needs no privilege.
		o.set(o.own)
	}
}

func (o *oomScore) set(v string) bool {
	_, err := o.f.WriteAt([]byte(v), 0)
	return err == nil
}

// raiseOwnOOMScore raises this process's score by adj: the stage does
// before it becomes the command.
func raiseOwnOOMScore(adj int) {
	if adj == 0 {
		return
	}
	if o := openOOMScore(); o != nil {
		defer o.f.Close()
		if own, err := strconv.Atoi(o.own); err == nil {
			o.set(strconv.Itoa(min(1000, own+adj)))
		}
	}
}
