//go:build !unix

package regfile

// Where named pipes cannot block an open and O_NOFOLLOW does not exist,
// Open adds nothing: a symlink is then followed, and only a regular file
// is still returned.
const (
	noBlock  = 0
	noFollow = 0
)
