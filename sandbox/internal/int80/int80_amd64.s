#include "textflag.h"

// func Call(nr uint32) uint32
TEXT ·Call(SB), NOSPLIT, $0-12
	MOVL nr+0(FP), AX
	INT  $0x80
	MOVL AX, ret+8(FP)
	RET
