package shellguard

import (
	"sync"

	"github.com/agentwarden/warden"
)

// Effect is what a command does to a path operand.
type Effect uint8

// Effects the effect×zone table knows.
const (
	EffDelete    Effect = iota // delete one file
	EffDeleteRec               // delete recursively, or a glob
	EffWrite                   // create, overwrite or append
	EffPerm                    // change mode or owner
	EffPermRec                 // change mode or owner recursively
	EffDevice                  // format, partition or wipe
	numEffects
)

var effectNames = [...]string{"delete", "delete_recursive", "write", "perm_change", "perm_change_recursive", "device_write"}

// String names the effect as in rule ids.
func (e Effect) String() string {
	if int(e) < len(effectNames) {
		return effectNames[e]
	}
	return "effect?"
}

// Table holds verdicts per effect and zone. A missing cell means ask.
type Table map[Effect]map[Zone]warden.Verdict

var (
	defaultTableOnce sync.Once
	defaultTableVal  Table
)

// DefaultTable returns the built-in effect×zone table of the design note
// (§5.3). Callers must not modify it.
func DefaultTable() Table {
	defaultTableOnce.Do(func() {
		const A, Q, D = warden.Allow, warden.Ask, warden.Deny
		row := func(root, system, device, null, homeRoot, homeSens, homeOther, wsRoot, wsVCS, wsArt, wsOther, temp, outside, unknown warden.Verdict) map[Zone]warden.Verdict {
			return map[Zone]warden.Verdict{
				ZoneRoot: root, ZoneSystem: system, ZoneDevice: device, ZoneNull: null,
				ZoneHomeRoot: homeRoot, ZoneHomeSensitive: homeSens, ZoneHomeOther: homeOther,
				ZoneWorkspaceRoot: wsRoot, ZoneWorkspaceVCS: wsVCS, ZoneWorkspaceArtifact: wsArt,
				ZoneWorkspaceOther: wsOther, ZoneTemp: temp, ZoneOutside: outside, ZoneUnknown: unknown,
				ZoneNetwork: D,
			}
		}
		defaultTableVal = Table{
			//                        root sys dev null hRoot hSens hOther wsRoot wsVCS wsArt wsOther temp outside unknown
			EffDelete:    row(D, D, D, A, D, D, Q, D, D, A, A, A, Q, Q),
			EffDeleteRec: row(D, D, D, A, D, D, D, D, D, A, Q, A, D, Q),
			EffWrite:     row(D, D, D, A, Q, D, Q, A, Q, A, A, A, Q, Q),
			EffPerm:      row(D, D, D, A, Q, D, Q, A, Q, A, A, A, Q, Q),
			EffPermRec:   row(D, D, D, A, D, D, D, Q, D, A, A, A, D, Q),
			EffDevice:    row(D, D, D, A, D, D, Q, D, D, A, A, A, Q, Q),
		}
		// What the host obeys later in the workspace (the agent host's and
		// editors' settings) is changed only with a human's answer: a
		// sandbox keeps it read-only, and a host that runs the command
		// itself (Cursor) would obey what it wrote.
		for e, cells := range defaultTableVal {
			v := Q
			if e == EffDevice {
				v = D
			}
			cells[ZoneWorkspaceProtected] = v
		}
	})
	return defaultTableVal
}

// lookup finds the verdict for an effect on a zone: the policy's cell if it
// has one, else the built-in cell, else ask.
func (p *Policy) lookup(e Effect, z Zone) warden.Verdict {
	if row, ok := p.Table[e]; ok {
		if v, ok := row[z]; ok {
			return v
		}
	}
	if v, ok := DefaultTable()[e][z]; ok {
		return v
	}
	return warden.Ask
}
