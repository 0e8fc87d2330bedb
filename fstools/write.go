package fstools

import (
	"errors"
	"io/fs"
	"os"

	"github.com/agentwarden/warden"
)

// Write replaces the content of the file name with data, or creates the file,
// atomically: a reader sees the old content or the new, never a mix, and a
// failed Write leaves the old content and no temporary file behind.
//
// An existing file keeps its permission bits (not setuid, setgid or sticky);
// being a new file, it is owned by the writing user. A new file gets perm's
// permission bits, less the umask; a zero perm means 0o644. Write refuses a
// name that is a directory, a symlink (it neither follows nor replaces one) or
// any other non-regular file, and data longer than the write limit. The file's
// directory must exist; see Mkdir.
func (r *Root) Write(name string, data []byte, perm os.FileMode) error {
	t, err := r.openTarget("write", name)
	if err != nil {
		return err
	}
	defer t.close()
	if int64(len(data)) > r.lim.MaxWrite {
		return warden.Errorf(warden.EInvalid, "writing %d bytes to %q exceeds the write limit of %d bytes; nothing was written", len(data), name, r.lim.MaxWrite).
			WithHint("write less, or raise the write limit")
	}
	old, err := t.existing("write")
	if err != nil {
		return err
	}
	if old != nil {
		return t.replace("write", data, old.Mode().Perm(), true)
	}
	perm = perm.Perm()
	if perm == 0 {
		perm = 0o644
	}
	return t.replace("write", data, perm, false)
}

// Append adds data to the end of the regular file name, creating it (mode
// 0o644 less the umask) if it does not exist. If the file would grow past the
// write limit, Append returns an error and appends nothing. Like Write, it
// refuses a symlink at name. It also refuses a file with more than one hard
// link: another link may be outside the root, and an append in place would
// change that file too (Write and Patch replace the name instead).
func (r *Root) Append(name string, data []byte) error {
	const op = "append to"
	t, err := r.openTarget(op, name)
	if err != nil {
		return err
	}
	defer t.close()
	if int64(len(data)) > r.lim.MaxWrite {
		return errAppendTooBig(name, len(data), 0, r.lim.MaxWrite)
	}
	before, err := t.existing(op)
	if err != nil {
		return err
	}
	flag := os.O_WRONLY | os.O_APPEND | noBlock
	if before == nil {
		flag |= os.O_CREATE | os.O_EXCL // never follows a symlink
	}
	f, err := t.dir.OpenFile(t.base, flag, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errChanged(name, "appended")
		}
		return r.pathError(op, name, err)
	}
	defer f.Close()

	// The open follows a symlink put at the name since the check: make sure
	// what was opened is what the name holds now, and a regular file.
	opened, err := f.Stat()
	if err != nil {
		return warden.Errorf(warden.EInternal, "cannot stat %q", name).Wrap(err)
	}
	now, err := t.dir.Lstat(t.base)
	if err != nil || !opened.Mode().IsRegular() || !os.SameFile(opened, now) {
		return errChanged(name, "appended")
	}
	if n := linkCount(opened); n > 1 {
		// Write and Patch replace the name and leave other links alone;
		// appending in place would also change them, wherever they are.
		return warden.Errorf(warden.EInvalid, "%q has %d hard links, which may be outside the root; appending in place would change them all; nothing was appended", name, n).
			WithHint("read the file and Write it whole: that replaces only this name")
	}
	if opened.Size()+int64(len(data)) > r.lim.MaxWrite {
		return errAppendTooBig(name, len(data), opened.Size(), r.lim.MaxWrite)
	}
	if _, err := f.Write(data); err != nil {
		return warden.Errorf(warden.EInternal, "appending to %q failed; part of the data may have been written", name).Wrap(err)
	}
	if err := f.Sync(); err != nil {
		return warden.Errorf(warden.EInternal, "appended to %q but could not sync it", name).Wrap(err)
	}
	if before == nil {
		if err := t.syncDir(); err != nil {
			return warden.Errorf(warden.EInternal, "created %q but could not sync its directory", name).Wrap(err)
		}
	}
	return nil
}

func errAppendTooBig(name string, n int, size, max int64) error {
	return warden.Errorf(warden.EInvalid, "appending %d bytes to %q (now %d bytes) would exceed the write limit of %d bytes; nothing was appended", n, name, size, max).
		WithHint("append less, or raise the write limit")
}

func errChanged(name, what string) error {
	return warden.Errorf(warden.EConflict, "%q changed while it was being opened; nothing was %s", name, what).
		WithHint("something else is changing the file; try again")
}
