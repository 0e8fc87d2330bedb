//go:build amd64 || arm64

package sandbox

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSeccompFilterShape checks what the kernel's verifier would: every
// jump lands inside the program and every path ends in a return, and the
// program starts with the architecture check that stops the i386 bypass.
func TestSeccompFilterShape(t *testing.T) {
	for _, p := range []seccompPlan{{}, {NoSpawn: true}, {BlockInet: true}, {NoSpawn: true, BlockInet: true}} {
		prog := p.filter()
		if len(prog) > 4096 {
			t.Fatalf("%+v: %d instructions, more than the kernel accepts", p, len(prog))
		}
		if prog[0].K != offArch || prog[1].K != nativeArch || prog[2].K != retKill {
			t.Errorf("%+v: the filter does not start by killing foreign architectures: %+v", p, prog[:3])
		}
		for i, ins := range prog {
			if ins.Code&0x07 == unix.BPF_JMP && ins.Code != unix.BPF_JMP|unix.BPF_JA {
				if i+1+int(ins.Jt) >= len(prog) || i+1+int(ins.Jf) >= len(prog) {
					t.Errorf("%+v: instruction %d jumps past the end", p, i)
				}
			}
		}
		if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != retAllow {
			t.Errorf("%+v: the program does not end by allowing: %+v", p, last)
		}
	}
}
