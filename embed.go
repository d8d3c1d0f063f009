// Package actionserver holds the files of the repository root that the
// binaries embed.
package actionserver

import _ "embed"

// DockerfileTemplate is Dockerfile.tmpl, the runtime image's Dockerfile as
// a text/template (see package image).
//
//go:embed Dockerfile.tmpl
var DockerfileTemplate string

// InstallCodeServer is scripts/install-code-server.sh, which installs the
// VS Code server for the vscode plugin both on a test machine and in an
// image.
//
//go:embed scripts/install-code-server.sh
var InstallCodeServer []byte
