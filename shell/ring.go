package shell

// ring keeps the most recent bytes of a stream, addressed by absolute
// offset from the start of the stream. Once it holds limit bytes, every
// write drops the oldest bytes; readers learn how many they missed. Storage
// grows on demand, so a command that prints little costs little.
//
// A ring is not safe for concurrent use.
type ring struct {
	buf   []byte
	head  int   // index in buf of the oldest byte kept
	size  int   // bytes kept
	total int64 // bytes ever written: the offset just past the newest byte
	limit int
}

func newRing(limit int) *ring {
	if limit < 1 {
		limit = 1
	}
	return &ring{limit: limit}
}

// Write appends p, dropping the oldest bytes beyond the limit.
func (r *ring) Write(p []byte) {
	r.total += int64(len(p))
	if len(p) >= r.limit {
		// Only the tail of p survives.
		p = p[len(p)-r.limit:]
		r.grow(r.limit)
		copy(r.buf, p)
		r.head, r.size = 0, len(p)
		return
	}
	if need := r.size + len(p); need > len(r.buf) && len(r.buf) < r.limit {
		r.grow(need)
	}
	for len(p) > 0 {
		// Write a contiguous run at the tail; whatever it overwrites is the
		// oldest data, so the head moves past it.
		c := len(r.buf)
		tail := (r.head + r.size) % c
		n := min(len(p), c-tail)
		copy(r.buf[tail:tail+n], p[:n])
		p = p[n:]
		r.size += n
		if over := r.size - c; over > 0 {
			r.head = (r.head + over) % c
			r.size = c
		}
	}
}

// grow makes the storage at least n bytes (at most limit) and linear.
func (r *ring) grow(n int) {
	c := max(2*len(r.buf), n, 4096)
	c = min(c, r.limit)
	if c <= len(r.buf) {
		return
	}
	nb := make([]byte, c)
	r.copyOut(nb, r.start())
	r.buf, r.head = nb, 0
}

// start is the offset of the oldest byte kept.
func (r *ring) start() int64 { return r.total - int64(r.size) }

// copyOut copies the bytes from offset off (which must be kept) into dst
// and returns how many it copied.
func (r *ring) copyOut(dst []byte, off int64) int {
	skip := int(off - r.start())
	n := 0
	for n < len(dst) && skip+n < r.size {
		i := (r.head + skip + n) % len(r.buf)
		end := len(r.buf)
		if stop := i + (r.size - skip - n); stop < end {
			end = stop
		}
		n += copy(dst[n:], r.buf[i:end])
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
	r.buf, r.head, r.size = nil, 0, 0
}
