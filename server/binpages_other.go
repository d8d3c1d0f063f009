//go:build !linux

package server

// releaseBinaryPages is a no-op where /proc/self/maps is not there.
func releaseBinaryPages() {}
