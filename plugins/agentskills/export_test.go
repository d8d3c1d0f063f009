package agentskills

// Dir returns the directory Start wrote, for tests.
func (p *Plugin) Dir() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dir
}
