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

// profileDir returns the profile directory of the running Chromium.
func (b *Browser) profileDir() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inst == nil {
		return ""
	}
	return b.inst.userDataDir
}
