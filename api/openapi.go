package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 description of every route, served at
// /openapi.json. It lives beside the types it describes; tests keep it
// equal to the router (package server) and to these types (schema by
// schema).
//
//go:embed openapi.json
var OpenAPI []byte
