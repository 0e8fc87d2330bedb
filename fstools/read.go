package fstools

import (
	"bytes"
	"io"
	"io/fs"
	"os"

	"github.com/agentwarden/warden"
)

// Read returns the content of the regular file name. It follows symlinks that
// stay inside the root. A file larger than the read limit is an error that
// gives its size and the limit: Read never returns part of a file.
func (r *Root) Read(name string) ([]byte, error) {
	rel, dirOnly, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	if dirOnly {
		return nil, errDirOnly("Read", name)
	}
	f, err := r.root.OpenFile(rel, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return nil, r.pathError("read", name, err)
	}
	defer f.Close()
	data, _, err := readRegular(f, name, r.lim.MaxRead, "the read limit")
	return data, err
}

// readRegular reads all of f, which must be a regular file of at most max
// bytes; limit names max in the error. It also returns f's FileInfo.
func readRegular(f *os.File, name string, max int64, limit string) ([]byte, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, warden.Errorf(warden.EInternal, "cannot stat %q", name).Wrap(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errNotRegular("read", name, fi.Mode())
	}
	if fi.Size() > max {
		return nil, nil, errTooBig(name, fi.Size(), max, limit)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, nil, warden.Errorf(warden.EInternal, "cannot read %q", name).Wrap(err)
	}
	if int64(buf.Len()) > max {
		return nil, nil, warden.Errorf(warden.EInvalid, "%q grew past %s of %d bytes while being read", name, limit, max).
			WithHint("wait until the file stops growing, or read a smaller file")
	}
	return buf.Bytes(), fi, nil
}

// errTooBig is the error for a file of size bytes over a limit of max.
func errTooBig(name string, size, max int64, limit string) error {
	return warden.Errorf(warden.EInvalid, "%q is %d bytes, more than %s of %d bytes", name, size, limit, max).
		WithHint("file tools never return part of a file; use a smaller file or raise the limit")
}
