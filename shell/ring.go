package shell

import (
	"bytes"
	"os"
)

// ring keeps the most recent bytes of a stream, addressed by absolute
// offset from the start of the stream. Once it holds limit bytes, every
// write drops the oldest bytes; readers learn how many they missed.
//
// Storage is allocated in blocks as it fills, so a command that prints
// little costs little, and reaching the limit never copies what is kept: a
// buffer grown by doubling would briefly hold one and a half times the
// limit, and leave the smaller copies as garbage.
//
// A ring is not safe for concurrent use.
type ring struct {
	blocks [][]byte // storage in order; all block long but maybe the last
	room   int      // bytes of storage, at most limit
	head   int      // storage index of the oldest byte kept
	size   int      // bytes kept
	total  int64    // bytes ever written: the offset just past the newest byte
	limit  int
	block  int // size of a storage block
	// file, when set, holds the bytes kept instead of blocks (see
	// spill.go): its byte 0 is the offset start().
	file *os.File
}

// ringBlock is the storage block size: large enough that a full ring has
// few blocks, small enough that a short output costs little.
const ringBlock = 64 << 10

// firstBlock is the smallest first storage block.
const firstBlock = 1 << 10

func newRing(limit int) *ring {
	return &ring{limit: max(limit, 1), block: ringBlock}
}

// at returns the storage from index i to the end of its block.
func (r *ring) at(i int) []byte {
	return r.blocks[i/r.block][i%r.block:]
}

// Write appends p, dropping the oldest bytes beyond the limit.
func (r *ring) Write(p []byte) {
	if r.file != nil {
		r.unspill()
	}
	r.total += int64(len(p))
	if len(p) >= r.limit {
		// Only the tail of p survives.
		p = p[len(p)-r.limit:]
		r.head, r.size = 0, 0
	}
	// Until the storage reaches the limit nothing is overwritten, so the
	// bytes kept start at index 0 and new blocks simply go at the end.
	for need := min(r.size+len(p), r.limit); r.room < need; {
		if len(r.blocks) <= 1 && r.room < r.block {
			// The first block grows by doubling up to a whole block:
			// most commands print a line or two, and a full block for
			// each would make every short command allocate 64 KiB.
			n := min(max(firstBlock, 2*r.room, need), r.block, r.limit)
			b := make([]byte, n)
			if len(r.blocks) == 1 {
				copy(b, r.blocks[0][:r.size]) // nothing wrapped yet: head is 0
				r.blocks[0] = b
			} else {
				r.blocks = append(r.blocks, b)
			}
			r.room = n
			continue
		}
		n := min(r.block, r.limit-r.room)
		r.blocks = append(r.blocks, make([]byte, n))
		r.room += n
	}
	for len(p) > 0 {
		// Fill the block at the tail; whatever that overwrites is the
		// oldest data, so the head moves past it.
		n := copy(r.at((r.head+r.size)%r.room), p)
		p = p[n:]
		r.size += n
		if over := r.size - r.room; over > 0 {
			r.head = (r.head + over) % r.room
			r.size = r.room
		}
	}
}

// start is the offset of the oldest byte kept.
func (r *ring) start() int64 { return r.total - int64(r.size) }

// copyOut copies the bytes from offset off (which must be kept) into dst
// and returns how many it copied.
func (r *ring) copyOut(dst []byte, off int64) int {
	if r.file != nil {
		return r.readFile(dst[:min(len(dst), int(r.total-off))], off)
	}
	skip := int(off - r.start())
	n := 0
	for n < len(dst) && skip+n < r.size {
		seg := r.at((r.head + skip + n) % r.room)
		seg = seg[:min(len(seg), r.size-skip-n)]
		n += copy(dst[n:], seg)
	}
	return n
}

// ReadFrom returns a copy of up to max bytes from offset off, and how many
// bytes before the returned data were dropped since off. An offset past the
// end returns nothing.
func (r *ring) ReadFrom(off int64, max int) (data []byte, lost int64) {
	if off < 0 {
		off = 0
	}
	if s := r.start(); off < s {
		lost = s - off
		off = s
	}
	n := r.total - off
	if n <= 0 {
		return nil, lost
	}
	if max >= 0 && int64(max) < n {
		n = int64(max)
	}
	data = make([]byte, n)
	r.copyOut(data, off)
	return data, lost
}

// release frees the storage; every byte counts as dropped from now on.
func (r *ring) release() {
	if r.file != nil {
		r.file.Close()
		r.file = nil
	}
	r.blocks, r.room, r.head, r.size = nil, 0, 0, 0
}

// lineStart returns the offset where the last n lines kept begin (a final
// newline ends the last line rather than starting one), or the oldest
// offset kept when fewer than n lines are kept. A reader that shows only
// the last lines copies only those.
func (r *ring) lineStart(n int) int64 {
	if n <= 0 {
		return r.total
	}
	if r.file != nil {
		return r.fileLineStart(n)
	}
	end := r.size // bytes kept before end are left to search
	if end > 0 {
		i := (r.head + end - 1) % r.room
		if r.blocks[i/r.block][i%r.block] == '\n' {
			end--
		}
	}
	for end > 0 {
		// The run of kept bytes that ends just before end and lies in
		// one block.
		i := (r.head + end - 1) % r.room
		k := min(i%r.block+1, end)
		seg := r.blocks[i/r.block][i%r.block+1-k : i%r.block+1]
		for {
			j := bytes.LastIndexByte(seg, '\n')
			if j < 0 {
				break
			}
			if n--; n == 0 {
				return r.start() + int64(end-k+j+1)
			}
			seg = seg[:j]
		}
		end -= k
	}
	return r.start()
}
