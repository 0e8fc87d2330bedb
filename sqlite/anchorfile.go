package sqlite

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/agentwarden/warden/audit"
)

// The chain anchor is a small file kept outside the database (audit.anchor
// in warden's home) that remembers what the home has recorded, so that a
// database that was deleted, cut short or replaced, or a spool that lost
// its tail, is noticed instead of being taken for a fresh one.
//
// It holds three fixed records, each checksummed (FNV-1a) so that a torn
// write is recognised and ignored:
//
//   - two database slots, A and B, each a keyed checkpoint (audit.Checkpoint
//     and its MAC) of both chains as of a commit, with the device and inode
//     of the database file. A write goes to the slot chosen by the
//     checkpoint's row total, so a torn write leaves the other slot, and a
//     reader takes the valid slot with the larger total;
//   - the spool record: how many bytes the spool held after the last append
//     that was synced, and, once a truncated spool has been seen, what was
//     claimed and what was found (kept until an audited recovery).
//
// The database slots are written after each commit, by a plain pwrite with
// no fsync (an fsync per commit would double the cost of a durable
// decision). Written after the commit, a slot can only lag the database,
// never lead it: a crash or power loss may lose the last few writes, and
// the anchor then vouches for a few rows fewer than the database holds,
// which no check mistakes for a loss. The spool record is written under
// the spool's lock after the spool's fdatasync, so it never claims bytes
// the spool might not hold either; the drain, which lowers it to zero
// before it empties the spool, syncs it.
const (
	anchorSlotSize  = 160
	anchorSpoolOff  = 2 * anchorSlotSize
	anchorSpoolSize = 48
	anchorSize      = anchorSpoolOff + anchorSpoolSize

	anchorMagic      = "WAN1"
	anchorSpoolMagic = "WSP1"
	slotBody         = 4 + 8 + 32 + 8 + 32 + 8 + 8 + 32 // magic, rows, head, rows, head, dev, ino, mac
	spoolBody        = 4 + 8 + 8 + 8
)

// anchorState is one database slot: a keyed checkpoint of both chains and
// the identity of the database file it was taken from.
type anchorState struct {
	audit.Checkpoint
	MAC      string
	Dev, Ino uint64
}

// spoolClaim is the spool record. LostClaimed > 0 means a spool shorter
// than what was claimed was seen: LostClaimed bytes claimed, LostFound
// found. Only an audited recovery clears it.
type spoolClaim struct {
	Size                   int64
	LostClaimed, LostFound int64
}

func (c spoolClaim) lost() bool { return c.LostClaimed > 0 }

// anchorFile is an open anchor file.
type anchorFile struct {
	path string
	f    *os.File
}

// openAnchor opens the anchor at path; a missing file is (nil, nil) unless
// create is set, which creates it (mode 0600, no records).
func openAnchor(path string, create bool) (*anchorFile, error) {
	flags := os.O_RDWR | noFollow
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the chain anchor %s: %w", path, err)
	}
	return &anchorFile{path: path, f: f}, nil
}

func (a *anchorFile) close() error {
	if a == nil {
		return nil
	}
	return a.f.Close()
}

// readDB returns the newest intact database slot. ok is false when neither
// slot holds a record; damaged is true when a slot holds bytes that are not
// an intact record and the other holds none (a damaged or forged anchor).
func (a *anchorFile) readDB() (st anchorState, ok, damaged bool, err error) {
	var b [2 * anchorSlotSize]byte
	n, err := a.f.ReadAt(b[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return st, false, false, fmt.Errorf("read the chain anchor %s: %w", a.path, err)
	}
	for i := range 2 {
		slot := b[i*anchorSlotSize : (i+1)*anchorSlotSize]
		if n < (i+1)*anchorSlotSize {
			slot = slot[:max(0, n-i*anchorSlotSize)]
		}
		s, good := decodeSlot(slot)
		switch {
		case good && (!ok || s.Total() > st.Total()):
			st, ok = s, true
		case !good && !allZero(slot):
			damaged = true
		}
	}
	return st, ok, damaged && !ok, nil
}

// writeDB writes st into its slot. It does not sync (see above).
func (a *anchorFile) writeDB(st anchorState) error {
	b, err := encodeSlot(st)
	if err != nil {
		return err
	}
	if _, err := a.f.WriteAt(b, (st.Total()%2)*anchorSlotSize); err != nil {
		return fmt.Errorf("write the chain anchor %s: %w", a.path, err)
	}
	return nil
}

// readSpool returns the spool record; a missing or torn one is the zero
// claim.
func (a *anchorFile) readSpool() (spoolClaim, error) {
	var b [anchorSpoolSize]byte
	n, err := a.f.ReadAt(b[:], anchorSpoolOff)
	if err != nil && !errors.Is(err, io.EOF) {
		return spoolClaim{}, fmt.Errorf("read the chain anchor %s: %w", a.path, err)
	}
	c, _ := decodeSpoolClaim(b[:n])
	return c, nil
}

// writeSpool writes the spool record; with sync, durably.
func (a *anchorFile) writeSpool(c spoolClaim, sync bool) error {
	b := make([]byte, anchorSpoolSize)
	copy(b, anchorSpoolMagic)
	binary.BigEndian.PutUint64(b[4:], uint64(c.Size))
	binary.BigEndian.PutUint64(b[12:], uint64(c.LostClaimed))
	binary.BigEndian.PutUint64(b[20:], uint64(c.LostFound))
	binary.BigEndian.PutUint64(b[spoolBody:], checksum(b[:spoolBody]))
	if _, err := a.f.WriteAt(b, anchorSpoolOff); err != nil {
		return fmt.Errorf("write the chain anchor %s: %w", a.path, err)
	}
	if sync {
		if err := a.f.Sync(); err != nil {
			return fmt.Errorf("sync the chain anchor %s: %w", a.path, err)
		}
	}
	return nil
}

func (a *anchorFile) sync() error { return a.f.Sync() }

func encodeSlot(st anchorState) ([]byte, error) {
	ah, err1 := hex.DecodeString(st.AuditHead)
	eh, err2 := hex.DecodeString(st.EventHead)
	mac, err3 := hex.DecodeString(st.MAC)
	if err := errors.Join(err1, err2, err3); err != nil || len(ah) != 32 || len(eh) != 32 || len(mac) != 32 {
		return nil, fmt.Errorf("encode the chain anchor: a head or MAC is not 64 hex digits")
	}
	b := make([]byte, anchorSlotSize)
	copy(b, anchorMagic)
	o := 4
	binary.BigEndian.PutUint64(b[o:], uint64(st.AuditRows))
	o += 8
	o += copy(b[o:], ah)
	binary.BigEndian.PutUint64(b[o:], uint64(st.EventRows))
	o += 8
	o += copy(b[o:], eh)
	binary.BigEndian.PutUint64(b[o:], st.Dev)
	o += 8
	binary.BigEndian.PutUint64(b[o:], st.Ino)
	o += 8
	copy(b[o:], mac)
	binary.BigEndian.PutUint64(b[slotBody:], checksum(b[:slotBody]))
	return b, nil
}

func decodeSlot(b []byte) (anchorState, bool) {
	var st anchorState
	if len(b) < slotBody+8 || string(b[:4]) != anchorMagic || binary.BigEndian.Uint64(b[slotBody:]) != checksum(b[:slotBody]) {
		return st, false
	}
	o := 4
	st.AuditRows = int64(binary.BigEndian.Uint64(b[o:]))
	o += 8
	st.AuditHead = hex.EncodeToString(b[o : o+32])
	o += 32
	st.EventRows = int64(binary.BigEndian.Uint64(b[o:]))
	o += 8
	st.EventHead = hex.EncodeToString(b[o : o+32])
	o += 32
	st.Dev = binary.BigEndian.Uint64(b[o:])
	o += 8
	st.Ino = binary.BigEndian.Uint64(b[o:])
	o += 8
	st.MAC = hex.EncodeToString(b[o : o+32])
	return st, st.AuditRows >= 0 && st.EventRows >= 0
}

func decodeSpoolClaim(b []byte) (spoolClaim, bool) {
	if len(b) < spoolBody+8 || string(b[:4]) != anchorSpoolMagic || binary.BigEndian.Uint64(b[spoolBody:]) != checksum(b[:spoolBody]) {
		return spoolClaim{}, false
	}
	c := spoolClaim{
		Size:        int64(binary.BigEndian.Uint64(b[4:])),
		LostClaimed: int64(binary.BigEndian.Uint64(b[12:])),
		LostFound:   int64(binary.BigEndian.Uint64(b[20:])),
	}
	return c, c.Size >= 0
}

func allZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }
