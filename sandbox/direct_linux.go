//go:build amd64 || arm64

package sandbox

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/agentwarden/warden/egress/fakedns"
)

// resolvConf is the sandbox's /etc/resolv.conf: the host answers every
// lookup at DNSAddr (in a DirectEgress run; in any other nothing answers).
const resolvConf = "# warden: this sandbox's name lookups are answered by warden (docs/sandbox.md)\nnameserver 127.0.0.1\noptions edns0\n"

// directNetwork makes an init's network namespace ready for clients that
// ignore the proxy variables, in every namespaced sandbox (what answers
// them is served only for a DirectEgress run): fakedns's range is routed to the loopback
// (an address of it on lo, whose prefix route on a loopback device is a
// local one), and /etc/resolv.conf names DNSAddr. It is best effort: a
// step the kernel refuses leaves those clients as they would be without
// it, unable to look a name up, and the rest of the sandbox as it is.
func directNetwork() {
	if routeDirectRange() == nil {
		_ = mountResolvConf()
	}
}

// routeDirectRange puts fakedns.Gateway, with fakedns.Prefix's mask, on
// the loopback as a second address (lo:1).
func routeDirectRange() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	addr, err := unix.NewIfreq("lo:1")
	if err != nil {
		return err
	}
	addr.SetInet4Addr(fakedns.Gateway.AsSlice())
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFADDR, addr); err != nil {
		return fmt.Errorf("add %s to the loopback: %w", fakedns.Gateway, err)
	}
	mask, err := unix.NewIfreq("lo:1")
	if err != nil {
		return err
	}
	mask.SetInet4Addr(net.CIDRMask(fakedns.Prefix.Bits(), 32))
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFNETMASK, mask); err != nil {
		return fmt.Errorf("route %s to the loopback: %w", fakedns.Prefix, err)
	}
	return nil
}

// mountResolvConf mounts a file holding resolvConf, read-only, on
// /etc/resolv.conf (on what it links to, when it is a link; nothing when
// there is none): a file of a tmpfs of its own, which nothing else sees.
func mountResolvConf() error {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fs)
	if err := unix.FsconfigSetString(fs, "size", "4k"); err != nil {
		return err
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return err
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(mnt)
	f, err := unix.Openat(mnt, "resolv.conf", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	_, err = unix.Write(f, []byte(resolvConf))
	unix.Close(f)
	if err != nil {
		return err
	}
	if err := unix.MountSetattr(mnt, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return err
	}
	tree, err := unix.OpenTree(mnt, "resolv.conf", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	// The host's file must be there to be covered: the init never makes
	// one (its root is the host's).
	if st, err := os.Stat("/etc/resolv.conf"); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("no /etc/resolv.conf to cover: %v", err)
	}
	return unix.MoveMount(tree, "", unix.AT_FDCWD, "/etc/resolv.conf", unix.MOVE_MOUNT_F_EMPTY_PATH)
}
