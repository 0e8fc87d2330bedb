package sqlite

import (
	"os"

	"github.com/ncruces/go-sqlite3"
)

// walCheckpointBytes bounds the write-ahead log between checkpoints.
//
// SQLite checkpoints the WAL into the database, and deletes it, when the last
// connection to a database closes. For warden's one-decision processes that is
// a large share of the cost of a write: the WAL is created, written, fsynced,
// copied, fsynced again and deleted every time (strace: 5 fdatasyncs per
// process instead of 2, one of which is the VFS's cheap repeat sync of a newly
// opened WAL). Connections here are opened with
// SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, so the WAL persists between processes and
// each process pays one fsync for its commit.
//
// The catch: the first connection to open a database whose WAL persists must
// rebuild the WAL index by reading the whole WAL, and it cannot know what
// earlier processes checkpointed, so the WAL never restarts and SQLite's
// automatic checkpoint (at 1000 pages) would copy an ever-growing WAL. So Close
// re-enables the checkpoint when the WAL file is larger than this bound; the
// last connection to close then copies the WAL into the database and deletes
// it. A Record adds about 42 KB (10 pages) to the WAL, so about one process in
// six pays the checkpoint, and reopening reads at most 256 KiB of WAL. A
// long-lived process (the daemon) keeps the WAL index alive, and SQLite's own
// automatic checkpoint applies to it as usual.
//
// Measured with internal/recordonce (open, one durable Record, close, as
// separate processes; 400 interleaved rounds on a loaded 2-vCPU VM; median wall
// / mean CPU): checkpoint on every close 6.01 / 5.64 ms; bound 64 KiB
// 5.77 / 5.46; 256 KiB 5.66 / 5.41; 1 MiB 5.76 / 5.62. In another run a 4 MiB
// bound was worst (6.94 ms median: recovery and the auto-checkpoint dominate),
// and checkpoint-on-every-close had the worst tail under I/O load.
const walCheckpointBytes = 256 << 10

// checkpointOnClose lets c checkpoint and remove the WAL when c closes, if the
// WAL is larger than walCheckpointBytes. If other connections still have the
// database open, SQLite skips the checkpoint; one of them will do it.
func checkpointOnClose(c *conn, path string) {
	fi, err := os.Stat(path + "-wal")
	if err != nil || fi.Size() <= walCheckpointBytes {
		return
	}
	_, _ = c.c.Config(sqlite3.DBCONFIG_NO_CKPT_ON_CLOSE, false)
}
