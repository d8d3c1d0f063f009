// Package event holds the wire types of the action execution API: the
// actions a host sends and the observations the server returns, exactly as
// the OpenHands host serialises and deserialises them.
//
// Decoding mirrors the host's defaults (every argument has one) and ignores
// unknown argument keys. Encoding emits only the documented "extras" keys of
// each observation type, because the host builds its observation classes with
// those keys as keyword arguments and crashes on any key it does not know.
//
// The package has no dependencies beyond the standard library, so both the
// server and any client can use it.
package event
