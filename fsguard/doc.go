// Package fsguard decides the filesystem capability: whether an agent may
// read, write, list or delete a path.
//
// A path is first made absolute against the request's working directory and
// cleaned, then resolved physically (every symlink followed, as the kernel
// would, with a missing tail kept as written), and judged in a fixed order:
//
//  1. paths that cannot be judged (empty, NUL bytes, invalid UTF-8, longer
//     than PathMax, ~user, symlink loops, anything reached through /proc or
//     /dev/fd) are denied;
//  2. warden's own home (its policy, database and keys) and the denied paths
//     are denied, whether the path names them or only resolves into them;
//     denied patterns match without regard to letter case, so a
//     case-insensitive filesystem cannot be used to slip past them;
//  3. the workspace allows every action;
//  4. the first allowed rule naming the action and matching the resolved
//     path decides: level auto allows, ask asks;
//  5. anything else is denied ("no rule for ACTION on PATH").
//
// A regular file with more than one hard link is asked about before it is
// read or written, even in the workspace: another name for it may lie outside
// every allowed area, and no path check can see where.
//
// Patterns are doublestar globs ("**" crosses directories). An absolute or
// "~/" pattern names one place; a relative pattern is relative to the project,
// the request's working directory, and only applies when that directory is
// neither "/" nor the user's home nor above it.
//
// The guard judges names. The file tools in package fstools open files so
// that a name judged here cannot be swapped for another between the check and
// the open.
package fsguard
