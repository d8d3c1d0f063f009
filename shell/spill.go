package shell

import (
	"bytes"
	"os"
)

// A finished command's output is read again rarely, and may be read for as
// long as the session remembers the command. Kept on the heap, bulk output
// stays in the server's resident memory long after anyone looks at it: the
// Go runtime returns freed pages to the kernel, but not pages still held.
// So once a command finishes, output of spillMin bytes or more moves to a
// file in its session's private directory, unlinked at once: the kernel's
// page cache holds it (and drops it under pressure), no path can be
// swapped for a link to something else, and a server that dies leaves
// nothing behind. Every byte stays readable by offset, as before; the
// budget (OutputBudget) still counts it and bounds the disk it takes.

// spillMin is the smallest finished output that moves to a file: below
// it, the file would cost more than the memory it frees. Each file holds a
// descriptor while its output is kept, so the budget bounds them too: at
// most its limit over spillMin (1,024 under the default 64 MiB), and the
// sessions' histories bound them again.
const spillMin = 64 << 10

// spills reports whether a finished command's output is in a file or on
// its way there.
func spills(r *ring) bool { return r.file != nil || r.size >= spillMin }

// spillLater moves c's output to a file once it finished, on its own
// goroutine: it is called with c.mu held, and writing megabytes then
// would hold up the session's reader.
func spillLater(c *Command) {
	if c.out.size < spillMin || c.out.file != nil {
		return
	}
	go c.spill()
}

// spill writes the output to a file without holding the lock (a finished
// command's ring takes no more writes, and the blocks it snapshots stay
// valid even if the ring is released meanwhile), then swaps the file in
// if the ring did not change.
func (c *Command) spill() {
	c.mu.Lock()
	r := c.out
	if r.file != nil || r.size < spillMin {
		c.mu.Unlock()
		return
	}
	blocks, head, size, room, total := r.blocks, r.head, r.size, r.room, r.total
	c.mu.Unlock()

	f, err := os.CreateTemp(c.spillDir(), "output-")
	if err != nil {
		return // it stays in memory
	}
	os.Remove(f.Name())
	snap := ring{blocks: blocks, head: head, size: size, room: room, block: r.block}
	for off := 0; off < size; {
		seg := snap.at((head + off) % room)
		seg = seg[:min(len(seg), size-off)]
		if _, err := f.Write(seg); err != nil {
			f.Close()
			return
		}
		off += len(seg)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if r.file != nil || r.total != total || r.size != size || r.room != room {
		f.Close() // released or written to meanwhile
		return
	}
	r.blocks, r.room, r.head = nil, 0, 0
	r.file = f
}

// readFile copies kept bytes from offset off into dst; a read that fails
// (the file system went away) leaves zeros.
func (r *ring) readFile(dst []byte, off int64) int {
	n, _ := r.file.ReadAt(dst, off-r.start())
	clear(dst[n:])
	return len(dst)
}

// unspill brings a file's bytes back into memory before a write: output
// that comes after a command finished is rare, and appending in place
// would need the ring's dropping of old bytes done twice.
func (r *ring) unspill() {
	f := r.file
	data := make([]byte, r.size)
	r.readFile(data, r.start())
	f.Close()
	start := r.start()
	*r = ring{limit: r.limit, block: r.block, total: start}
	r.Write(data)
}

// fileLineStart is lineStart for output in a file: it reads backwards in
// blocks until it has seen n line ends.
func (r *ring) fileLineStart(n int) int64 {
	end := int64(r.size)
	if end > 0 {
		var last [1]byte
		if _, err := r.file.ReadAt(last[:], end-1); err == nil && last[0] == '\n' {
			end--
		}
	}
	buf := make([]byte, min(int64(ringBlock), end))
	for end > 0 {
		k := min(int64(len(buf)), end)
		seg := buf[:k]
		if _, err := r.file.ReadAt(seg, end-k); err != nil {
			return r.start()
		}
		for {
			j := bytes.LastIndexByte(seg, '\n')
			if j < 0 {
				break
			}
			if n--; n == 0 {
				return r.start() + end - k + int64(j) + 1
			}
			seg = seg[:j]
		}
		end -= k
	}
	return r.start()
}

// spillDir is where c's output file goes: its shell's private directory,
// or the temporary directory for a piped command, which has no shell.
func (c *Command) spillDir() string {
	if c.proc == nil {
		return ""
	}
	return c.proc.dir
}
