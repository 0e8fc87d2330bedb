package fstools

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// PatchResult tells what Patch changed.
type PatchResult struct {
	Hunks   int   // hunks applied
	Added   int64 // lines added
	Deleted int64 // lines deleted
	Size    int64 // the file's size afterwards, in bytes
}

// Patch applies a unified diff to the existing text file name, atomically, as
// Write does; the file keeps its mode. The diff may come with a "diff --git"
// header or be a plain "--- a/x" / "+++ b/x" diff, and must change exactly
// name: a diff naming another file, more than one file, creating, deleting,
// renaming or copying a file, changing its mode, or holding binary data is
// refused. So is a hunk that does not apply exactly; the error says which one.
// On any error the file is unchanged.
func (r *Root) Patch(name string, diff []byte) (PatchResult, error) {
	const op = "patch"
	t, err := r.openTarget(op, name)
	if err != nil {
		return PatchResult{}, err
	}
	defer t.close()
	file, err := r.parseDiff(name, t.rel, diff)
	if err != nil {
		return PatchResult{}, err
	}
	old, err := t.existing(op)
	if err != nil {
		return PatchResult{}, err
	}
	if old == nil {
		return PatchResult{}, warden.Errorf(warden.ENotFound, "%q does not exist in the root %s; Patch changes existing files", name, r.dir).
			WithHint("use Write to create a file")
	}
	f, err := t.dir.OpenFile(t.base, os.O_RDONLY|noBlock, 0)
	if err != nil {
		return PatchResult{}, r.pathError(op, name, err)
	}
	content, fi, err := readRegular(f, name, r.lim.MaxRead, "the read limit")
	f.Close()
	if err != nil {
		return PatchResult{}, err
	}
	if !os.SameFile(fi, old) {
		return PatchResult{}, errChanged(name, "patched")
	}
	if bytes.IndexByte(content[:min(len(content), binarySniffLen)], 0) >= 0 {
		return PatchResult{}, warden.Errorf(warden.EInvalid, "%q looks like a binary file (it has a NUL byte); Patch changes text files", name).
			WithHint("use Write to replace a binary file")
	}

	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(content), file); err != nil {
		return PatchResult{}, hunkError(name, file, err)
	}
	if int64(out.Len()) > r.lim.MaxWrite {
		return PatchResult{}, warden.Errorf(warden.EInvalid, "patching %q would make it %d bytes, more than the write limit of %d bytes; nothing was changed", name, out.Len(), r.lim.MaxWrite).
			WithHint("make the file smaller, or raise the write limit")
	}
	if err := t.replace(op, out.Bytes(), old.Mode().Perm(), true); err != nil {
		return PatchResult{}, err
	}
	res := PatchResult{Hunks: len(file.TextFragments), Size: int64(out.Len())}
	for _, frag := range file.TextFragments {
		res.Added += frag.LinesAdded
		res.Deleted += frag.LinesDeleted
	}
	return res, nil
}

// parseDiff parses diff and checks that it changes the file rel (given by the
// caller as name) and nothing else.
func (r *Root) parseDiff(name, rel string, diff []byte) (*gitdiff.File, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the diff for %q cannot be parsed: %v", name, err).
			WithHint("give a unified diff, with or without a \"diff --git\" header").Wrap(err)
	}
	if len(files) == 0 {
		return nil, warden.Errorf(warden.EInvalid, "the diff for %q has no file header", name).
			WithHint(`start it with "--- a/NAME" and "+++ b/NAME" lines, then "@@" hunks`)
	}
	if len(files) > 1 {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.NewName
			if f.IsDelete {
				names[i] = f.OldName
			}
		}
		return nil, warden.Errorf(warden.EInvalid, "the diff changes %d files (%s); Patch changes one file", len(files), strings.Join(names, ", ")).
			WithHint("split the diff and patch each file on its own")
	}
	f := files[0]
	switch {
	case f.IsNew:
		return nil, warden.Errorf(warden.EInvalid, "the diff creates %q; Patch changes an existing file", f.NewName).
			WithHint("use Write to create a file")
	case f.IsDelete:
		return nil, warden.Errorf(warden.EInvalid, "the diff deletes %q; Patch changes a file's content", f.OldName).
			WithHint("use Delete to delete a file")
	case f.IsRename || f.IsCopy:
		return nil, warden.Errorf(warden.EInvalid, "the diff renames or copies %q to %q; Patch changes one file in place", f.OldName, f.NewName).
			WithHint("give a diff that changes only the content of " + name)
	case f.IsBinary || f.BinaryFragment != nil:
		return nil, warden.Errorf(warden.EInvalid, "the diff for %q is a binary patch; Patch applies text hunks", name).
			WithHint("use Write to replace a binary file")
	case f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode:
		return nil, warden.Errorf(warden.EInvalid, "the diff changes the mode of %q; Patch changes content only", name).
			WithHint(`remove the "old mode" and "new mode" lines`)
	case len(f.TextFragments) == 0:
		return nil, warden.Errorf(warden.EInvalid, "the diff for %q has no hunks", name).
			WithHint(`give at least one "@@ -a,b +c,d @@" hunk`)
	}
	git := bytes.HasPrefix(diff, []byte("diff --git ")) || bytes.Contains(diff, []byte("\ndiff --git "))
	for _, n := range []string{f.OldName, f.NewName} {
		if !r.diffNames(n, rel, git) {
			return nil, warden.Errorf(warden.EInvalid, "the diff is for %q, not %q", n, name).
				WithHint("Patch changes only the file it is given; make the diff's --- and +++ names match it")
		}
	}
	return f, nil
}

// diffNames reports whether the name n from a diff names rel. A plain diff's
// names keep their "a/" or "b/" prefix; a git diff's come without it.
func (r *Root) diffNames(n, rel string, git bool) bool {
	if got, err := r.Rel(n); err == nil && got == rel {
		return true
	}
	if !git && (strings.HasPrefix(n, "a/") || strings.HasPrefix(n, "b/")) {
		if got, err := r.Rel(n[2:]); err == nil && got == rel {
			return true
		}
	}
	return false
}

// hunkError turns a failure of gitdiff.Apply into an error naming the hunk.
func hunkError(name string, f *gitdiff.File, err error) error {
	var ae *gitdiff.ApplyError
	if !errors.As(err, &ae) || ae.Fragment < 1 || ae.Fragment > len(f.TextFragments) {
		return warden.Errorf(warden.EInvalid, "the diff does not apply to %q: %v; the file is unchanged", name, err).
			WithHint("read the file again and make a diff against its current content").Wrap(err)
	}
	// gitdiff applies hunks in order of their old position; so count them.
	frags := slices.Clone(f.TextFragments)
	slices.SortStableFunc(frags, func(a, b *gitdiff.TextFragment) int { return cmp.Compare(a.OldPosition, b.OldPosition) })
	frag := frags[ae.Fragment-1]
	return warden.Errorf(warden.EInvalid, "hunk %d of %d (%s) does not apply to %q at line %d: %v; the file is unchanged",
		ae.Fragment, len(frags), strings.TrimSpace(frag.Header()), name, ae.Line, ae.Unwrap()).
		WithHint("read the file again and make the hunk's context lines match its current content").Wrap(err)
}
