//go:build amd64 || arm64

package sandbox

// EarlyState reports the pid of the init StartEarly started (0: none) and
// whether a run or DiscardEarly took it; ForgetEarly lets a test start
// another.
func EarlyState() (pid int, taken bool) {
	early.Lock()
	defer early.Unlock()
	if early.e != nil {
		<-early.e.admitted
	}
	if early.e == nil || early.e.ip == nil {
		return 0, early.e != nil && early.e.taken
	}
	return early.e.ip.pid, early.e.taken
}

func ForgetEarly() {
	DiscardEarly()
	early.Lock()
	early.e = nil
	early.Unlock()
}

// GoBuildID and SetHelperBuildID reach the helper's identity check.
var GoBuildID, NoteBuildID = goBuildID, noteBuildID

func SetHelperBuildID(id string) (restore func()) {
	old := helperBuildID
	helperBuildID = id
	return func() { helperBuildID = old }
}

func InitExeBeside(self string) (string, error) { return initExeFor(self), nil }
