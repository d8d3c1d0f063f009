// Package serverflags parses action-server's command line, OpenHands'
// argv form included. It lives outside package main so that other code,
// such as the deployment manifests' tests, checks against the real parser.
package serverflags

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Config is what the command line says.
type Config struct {
	Port          int
	Host          string
	WorkDir       string
	Plugins       []string
	Username      string
	UserID        int // -1 when not given
	EnableBrowser bool
	BrowserEager  bool // start Chromium at start-up, not on the first browser action
	EvalEnv       string
	OutputBuffer  int      // bytes of output kept per command; 0: the default
	OutputBudget  int      // finished commands' output kept, all sessions; 0: DefaultOutputBudget
	AllowOrigins  []string // --allow-origin: origins whose browser requests are accepted
	AllowHosts    []string // --allow-host: Host names accepted without an API key
	APIKeyFile    string   // --api-key-file: read the key from this file, then remove it
	GenerateKey   bool     // --generate-key: make a key when none is given, and print it
	ShowVersion   bool
	ShowHelp      bool
}

// DefaultOutputBudget is the default of --output-budget: eight commands'
// worth of the default --output-buffer.
const DefaultOutputBudget = 64 << 20

// Usage is the help text printed for --help and after a command-line error.
const Usage = `Usage: action-server [PORT] [flags]

Runs the action execution server: a persistent shell, file, browser and
plugin actions behind an HTTP API that the OpenHands host can drive.

Flags (OpenHands' command line is accepted as is):
  PORT, --port N             port to listen on (default 8000)
  --host ADDR                address to listen on (default 0.0.0.0)
  --working-dir DIR          workspace and initial shell directory (default: current)
  --plugins NAME [NAME ...]  plugins to start: jupyter, agent_skills, vscode
  --username USER            sandbox user the shell runs as (default: current user)
  --user-id N                uid for USER if it has to be created (default 1000)
  --enable-browser, --no-enable-browser
                             allow browser actions (default: enabled)
  --browser-eager            start the browser at start-up, not on the first browser action
  --browsergym-eval-env ENV  BrowserGym evaluation environment
  --output-buffer SIZE       output kept per command, e.g. 8M (default), 64M, 512K
  --output-budget SIZE       output kept by finished commands, all sessions together
                             (default 64M); the oldest is dropped first
  --api-key-file FILE        read the API key from FILE, then remove FILE
                             (also SESSION_API_KEY_FILE)
  --generate-key             without a key from the environment or a file, make one
                             and print it once on standard error
  --allow-origin ORIGIN      accept browser requests from ORIGIN (scheme://host[:port]);
                             repeatable
  --allow-host NAME          accept Host NAME without an API key; repeatable
  --version                  print the version and exit

Environment: SESSION_API_KEY, SESSION_API_KEY_FILE, NO_CHANGE_TIMEOUT_SECONDS,
INIT_PLUGIN_TIMEOUT, SANDBOX_GROUP_ID, LOG_LEVEL, LOG_JSON (see README.md).
`

// Parse parses the command line without the program name. It accepts
// "--flag value" and "--flag=value", a positional port anywhere, and
// "--plugins" followed by one or more names, as Python's argparse does for
// the upstream server.
func Parse(args []string) (Config, error) {
	c := Config{Port: -1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true}
	positional := 0
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if positional > 0 {
				return c, fmt.Errorf("unexpected argument %q", arg)
			}
			p, err := parsePort(arg)
			if err != nil {
				return c, err
			}
			c.Port = p
			positional++
			continue
		}
		name, value, hasValue := strings.Cut(arg, "=")
		// next returns the flag's value: after '=' or the next argument.
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "--") && len(args[i+1]) > 2) {
				return "", fmt.Errorf("flag %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		noValue := func() error {
			if hasValue {
				return fmt.Errorf("flag %s takes no value", name)
			}
			return nil
		}
		var err error
		switch name {
		case "--port":
			var v string
			if v, err = next(); err == nil {
				c.Port, err = parsePort(v)
			}
		case "--host":
			c.Host, err = next()
		case "--working-dir":
			c.WorkDir, err = next()
		case "--username":
			c.Username, err = next()
		case "--user-id":
			var v string
			if v, err = next(); err == nil {
				c.UserID, err = strconv.Atoi(v)
				if err != nil || c.UserID < 0 {
					err = fmt.Errorf("--user-id: %q is not a user id", v)
				}
			}
		case "--plugins":
			if hasValue {
				c.Plugins = append(c.Plugins, value)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				if _, perr := strconv.Atoi(args[i+1]); perr == nil && c.Port < 0 && positional == 0 && i+2 == len(args) {
					break // a trailing number is the port, as argparse reads it
				}
				i++
				c.Plugins = append(c.Plugins, args[i])
			}
			if len(c.Plugins) == 0 {
				err = errors.New("--plugins needs at least one name")
			}
		case "--enable-browser":
			err = noValue()
			c.EnableBrowser = true
		case "--no-enable-browser":
			err = noValue()
			c.EnableBrowser = false
		case "--browser-eager":
			err = noValue()
			c.BrowserEager = true
		case "--browsergym-eval-env":
			c.EvalEnv, err = next()
		case "--output-buffer":
			var v string
			if v, err = next(); err == nil {
				c.OutputBuffer, err = parseSize(name, v)
			}
		case "--output-budget":
			var v string
			if v, err = next(); err == nil {
				c.OutputBudget, err = parseSize(name, v)
			}
		case "--api-key-file":
			c.APIKeyFile, err = next()
		case "--generate-key":
			err = noValue()
			c.GenerateKey = true
		case "--allow-origin":
			var v string
			if v, err = next(); err == nil {
				if err = checkOrigin(v); err == nil {
					c.AllowOrigins = append(c.AllowOrigins, v)
				}
			}
		case "--allow-host":
			var v string
			if v, err = next(); err == nil {
				if v == "" || strings.ContainsAny(v, ":/ ") {
					err = fmt.Errorf("--allow-host: %q is not a host name", v)
				} else {
					c.AllowHosts = append(c.AllowHosts, v)
				}
			}
		case "--version":
			c.ShowVersion = true
		case "-h", "--help":
			c.ShowHelp = true
		default:
			err = fmt.Errorf("unknown flag %s", name)
		}
		if err != nil {
			return c, err
		}
	}
	if c.Port < 0 {
		c.Port = 8000
	}
	if c.EvalEnv != "" && !c.EnableBrowser {
		return c, errors.New("Browser environment is not enabled in config, but browsergym_eval_env is set")
	}
	return c, nil
}

// parseSize reads a byte count with an optional K, M or G suffix (powers
// of 1024).
func parseSize(flag, s string) (int, error) {
	mult := 1
	switch strings.ToUpper(s[len(s)-min(1, len(s)):]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, fmt.Errorf("%s: %q is not a size like 8M", flag, s)
	}
	return n * mult, nil
}

// checkOrigin accepts what a browser sends as Origin: scheme://host[:port]
// with nothing after it.
func checkOrigin(o string) error {
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" {
		return fmt.Errorf("--allow-origin: %q is not an origin like https://example.com:8443", o)
	}
	return nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 65535 {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	return p, nil
}
