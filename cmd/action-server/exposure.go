package main

import (
	"net"
	"strings"
)

// exposedWithoutKey reports whether listening on host without an API key
// lets other machines run commands, which deserves a warning at start. Only
// a loopback address (or "localhost") is private; an empty host listens on
// every interface, and any other name may resolve to a public address.
func exposedWithoutKey(host, apiKey string) bool {
	return apiKey == "" && !isLoopback(host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}
