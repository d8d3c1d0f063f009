package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ServerConfig is one stdio MCP server, as the host sends it.
type ServerConfig struct {
	// Name identifies the server and prefixes its tools when there are
	// several: letters, digits, '-' and '_' only.
	Name string `json:"name"`
	// Command is the executable, looked up in the sandbox's PATH.
	Command string `json:"command"`
	// Args are its arguments.
	Args []string `json:"args"`
	// Env is added to the sandbox's environment.
	Env map[string]string `json:"env"`
}

// equal reports whether two configs describe the same server, as the host
// compares them: the order of args matters, that of env does not.
func (c ServerConfig) equal(o ServerConfig) bool {
	return c.Name == o.Name && c.Command == o.Command &&
		slices.Equal(c.Args, o.Args) && maps.Equal(c.Env, o.Env)
}

// ErrNotList is returned by ParseConfigs for a body that is not a JSON list.
var ErrNotList = errors.New("request must be a list of MCP tools to sync")

// ConfigError is an entry of the list that upstream's validation refuses.
type ConfigError struct {
	Index int
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("MCP server %d: %v", e.Index, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

var (
	// Compiled on first use, not at every start of the server.
	validName   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) })
	validEnvKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`) })
)

// wireConfig accepts what upstream's model accepts: args as a list or as
// one shell-quoted string, env as an object or as "K=V,K2=V2".
type wireConfig struct {
	Name    *string         `json:"name"`
	Command *string         `json:"command"`
	Args    json.RawMessage `json:"args"`
	Env     json.RawMessage `json:"env"`
}

// ParseConfigs decodes and validates the body of /update_mcp_server with
// upstream's rules: ErrNotList when it is not a JSON list, a *ConfigError
// for an entry the rules refuse (a missing, empty or invalid name; a
// missing or empty command, or one with a space; bad args or env). Names
// and commands are trimmed.
func ParseConfigs(data []byte) ([]ServerConfig, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return nil, ErrNotList
	}
	cfgs := make([]ServerConfig, 0, len(raw))
	seen := map[string]bool{}
	for i, r := range raw {
		c, err := parseConfig(r)
		if err != nil {
			return nil, &ConfigError{Index: i, Err: err}
		}
		if seen[c.Name] {
			// Upstream keys servers by name, so the last one wins.
			cfgs = slices.DeleteFunc(cfgs, func(o ServerConfig) bool { return o.Name == c.Name })
		}
		seen[c.Name] = true
		cfgs = append(cfgs, c)
	}
	return cfgs, nil
}

func parseConfig(r json.RawMessage) (ServerConfig, error) {
	var w wireConfig
	if err := json.Unmarshal(r, &w); err != nil {
		return ServerConfig{}, fmt.Errorf("not an object with string fields: %w", err)
	}
	var c ServerConfig
	if w.Name == nil {
		return c, errors.New("name is required")
	}
	if w.Command == nil {
		return c, errors.New("command is required")
	}
	c.Name = strings.TrimSpace(*w.Name)
	if c.Name == "" {
		return c, errors.New("Server name cannot be empty")
	}
	if !validName().MatchString(c.Name) {
		return c, errors.New("Server name can only contain letters, numbers, hyphens, and underscores")
	}
	c.Command = strings.TrimSpace(*w.Command)
	if c.Command == "" {
		return c, errors.New("Command cannot be empty")
	}
	if strings.Contains(c.Command, " ") {
		return c, errors.New("Command should be a single executable without spaces (use arguments field for parameters)")
	}
	var err error
	if c.Args, err = parseArgs(w.Args); err != nil {
		return c, err
	}
	if c.Env, err = parseEnv(w.Env); err != nil {
		return c, err
	}
	return c, nil
}

func isNull(r json.RawMessage) bool {
	r = bytes.TrimSpace(r)
	return len(r) == 0 || string(r) == "null"
}

func parseArgs(r json.RawMessage) ([]string, error) {
	if isNull(r) {
		return []string{}, nil
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return splitShell(s)
	}
	var args []string
	if err := json.Unmarshal(r, &args); err != nil {
		return nil, fmt.Errorf("args must be a list of strings: %w", err)
	}
	if args == nil {
		args = []string{}
	}
	return args, nil
}

func parseEnv(r json.RawMessage) (map[string]string, error) {
	env := map[string]string{}
	if isNull(r) {
		return env, nil
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		for pair := range strings.SplitSeq(s, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return nil, fmt.Errorf("Environment variable '%s' must be in KEY=VALUE format", pair)
			}
			k = strings.TrimSpace(k)
			if !validEnvKey().MatchString(k) {
				return nil, fmt.Errorf("Invalid environment variable name '%s'", k)
			}
			env[k] = v
		}
		return env, nil
	}
	if err := json.Unmarshal(r, &env); err != nil {
		return nil, fmt.Errorf("env must map strings to strings: %w", err)
	}
	if env == nil {
		env = map[string]string{}
	}
	return env, nil
}

// splitShell splits s into words as a POSIX shell would, without
// expansions: quotes group, a backslash escapes outside single quotes.
func splitShell(s string) ([]string, error) {
	words := []string{}
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("Invalid argument format: No closing quotation")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
