// Package fstools gives agents file tools that cannot reach outside one root
// directory: Read, Write, Append, Patch, List, Stat, Delete, Mkdir and Search.
//
// The package decides nothing about what an agent may do; a policy stage does
// that before a tool runs. It only makes sure that whatever runs stays below the
// root. Every operation goes through an os.Root, which resolves each path
// component with openat and O_NOFOLLOW and refuses a symlink that is absolute or
// climbs out of the root. A symlink or directory swapped in between a check and
// an open therefore cannot lead outside the root: there is no check separate
// from the open to race with.
//
// # Names
//
// Every tool takes a name as an agent gives it and turns it into a clean,
// slash-separated path relative to the root (see Root.Rel). A relative name is
// taken relative to the root; an absolute name must lie lexically inside the
// root. Names are cleaned lexically before use, so "link/.." means the root
// itself, never the parent of link's target. A name ending in "/", "/." or
// "/.." names a directory: Read, Write, Append and Patch refuse it, and Stat,
// Delete and Search require a directory there.
//
// # Symlinks
//
// A symlink whose target is relative and stays inside the root is followed
// where the operating system would follow it: in the middle of any path, and
// at the end of a path given to Read, List or Search. An absolute symlink is
// refused even when it points inside the root. Stat, List's entries and Delete
// see a symlink itself (Lstat semantics); Write, Append and Patch refuse a
// symlink at the end of the path; Search never descends into one.
//
// # What confinement cannot stop
//
// A hard link inside the root to a file outside it is the same file as the
// outside one: no check on paths can tell them apart, and Read returns its
// content. The path policy (package fsguard) asks before touching a file with
// more than one link. Writes are safe from it: Write and Patch replace the
// name, leaving other links alone, and Append refuses a file with more than
// one link. Bind mounts and device files are likewise out of reach of path
// confinement.
//
// # Writes
//
// Write and Patch are atomic: they write a temporary file beside the target,
// sync it, rename it over the target and sync the directory, so a reader sees
// the old content or the new, never a mix, and a failed call changes nothing.
//
// # Errors
//
// Errors are *warden.Error values whose message names the path and whose hint
// says what to do. Where the cause is a missing file, errors.Is(err,
// fs.ErrNotExist) holds.
package fstools
