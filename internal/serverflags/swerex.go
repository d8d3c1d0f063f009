package serverflags

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// SwerexName is the program SWE-agent starts in a sandbox for its SWE-ReX
// runtime. The binary linked (or copied) under this name serves SWE-ReX's
// API instead of the native one, taking that program's command line.
const SwerexName = "swerex-remote"

// IsSwerex reports whether the binary was started as SwerexName.
func IsSwerex(argv0 string) bool { return filepath.Base(argv0) == SwerexName }

// SwerexConfig is swerex-remote's command line, with upstream's defaults.
type SwerexConfig struct {
	Host        string // default 0.0.0.0
	Port        int    // default 8000
	AuthToken   string // required, may be empty
	ShowVersion bool
	ShowHelp    bool
}

// SwerexUsage is swerex-remote's help text.
const SwerexUsage = `usage: swerex-remote --auth-token AUTH_TOKEN [--host HOST] [--port PORT]

Serve the SWE-ReX remote runtime API (swe-rex 1.4.0) over action-server's
shell sessions.

options:
  -h, --help               show this help message and exit
  -v, --version            print the version and exit
  --host HOST              Host to bind the server to (default 0.0.0.0)
  --port PORT              Port to run the server on (default 8000)
  --auth-token AUTH_TOKEN  token to authenticate requests (required; X-API-Key)
`

// ParseSwerex parses swerex-remote's arguments as upstream's argparse
// does: "--opt value" or "--opt=value", and any unambiguous prefix of an
// option's name.
func ParseSwerex(args []string) (SwerexConfig, error) {
	cfg := SwerexConfig{Host: "0.0.0.0", Port: 8000}
	names := []string{"--host", "--port", "--auth-token", "--version", "--help"}
	haveToken := false
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch arg {
		case "-h":
			cfg.ShowHelp = true
			continue
		case "-v":
			cfg.ShowVersion = true
			continue
		}
		if !strings.HasPrefix(arg, "--") {
			return cfg, fmt.Errorf("unrecognized arguments: %s", arg)
		}
		name, value, hasValue := strings.Cut(arg, "=")
		full, err := expandOption(name, names)
		if err != nil {
			return cfg, err
		}
		switch full {
		case "--help":
			cfg.ShowHelp = true
			continue
		case "--version":
			cfg.ShowVersion = true
			continue
		}
		if !hasValue {
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && args[i+1] != "-") {
				return cfg, fmt.Errorf("argument %s: expected one argument", full)
			}
			i++
			value = args[i]
		}
		switch full {
		case "--host":
			cfg.Host = value
		case "--port":
			p, err := strconv.Atoi(value)
			if err != nil || p < 0 || p > 65535 {
				return cfg, fmt.Errorf("argument --port: invalid int value: '%s'", value)
			}
			cfg.Port = p
		case "--auth-token":
			cfg.AuthToken, haveToken = value, true
		}
	}
	if cfg.ShowHelp {
		return cfg, nil
	}
	if cfg.ShowVersion {
		if haveToken || len(args) > 1 {
			return cfg, errors.New("--version cannot be combined with other arguments")
		}
		return cfg, nil
	}
	if !haveToken {
		return cfg, errors.New("the following arguments are required: --auth-token")
	}
	return cfg, nil
}

// expandOption resolves an option or an unambiguous prefix of one.
func expandOption(name string, names []string) (string, error) {
	var found []string
	for _, n := range names {
		if n == name {
			return n, nil
		}
		if len(name) > 2 && strings.HasPrefix(n, name) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("unrecognized arguments: %s", name)
	}
	return "", fmt.Errorf("ambiguous option: %s could match %s", name, strings.Join(found, ", "))
}
