// Package api holds the wire types of the native API: the /sessions routes
// (sessions, commands, output chunks and the events of an output stream),
// /server_info, and the events of /watch. The server fills them and the
// client decodes them, so the two cannot drift apart. It imports only the
// standard library.
//
// The OpenHands wire format (actions and observations) is package event's,
// not this one's.
package api
