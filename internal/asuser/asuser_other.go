//go:build !linux

package asuser

import "errors"

// Do calls f with u's filesystem rights; only Linux has per-thread
// filesystem credentials, so elsewhere a non-nil u is refused.
func (u *User) Do(f func() error) error {
	if u == nil {
		return f()
	}
	return errors.New("asuser: switching filesystem rights needs Linux")
}

func euid() int { return -1 }
