package executor

// Done is closed when the command has finished (or its shell died).
func (c *Command) Done() <-chan struct{} { return c.c.Done() }
