package browser

// pid returns the process id of the running Chromium, 0 when none runs.
func (b *Browser) pid() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inst == nil {
		return 0
	}
	return b.inst.pid
}
