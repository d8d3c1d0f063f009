package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/actionserver/actionserver/internal/serverflags"
)

// The API key comes from one of: SESSION_API_KEY, a key file
// (--api-key-file or SESSION_API_KEY_FILE), or --generate-key. However it
// came, it ends up only in the server's memory: not in its environment,
// not in a file, never in the shell's environment.

const (
	keyEnv     = "SESSION_API_KEY"
	keyFileEnv = "SESSION_API_KEY_FILE"
	// keyFDEnv names the descriptor on which a server re-executed by
	// hideKeyFromEnviron reads its key.
	keyFDEnv = "ACTION_SERVER_KEY_FD"
	// maxKeyBytes bounds a key read from a pipe or file.
	maxKeyBytes = 4 << 10
)

// serverOwnEnv are variables of the server's environment that are its own
// plumbing or secrets: the shells and plugins never get them.
var serverOwnEnv = map[string]bool{keyEnv: true, keyFileEnv: true, keyFDEnv: true, initChildEnv: true}

// apiKey is the key the server runs with, and where it came from.
type apiKey struct {
	key       string
	generated bool
}

// loadAPIKey returns the key, reading it from the pipe a re-executed
// server inherits, the environment or the key file, which it then
// removes. With --generate-key and no key given, it makes one. It clears
// the variables it read, so that nothing started later inherits them.
func loadAPIKey(cfg serverflags.Config, log *slog.Logger) (apiKey, error) {
	var k apiKey
	fromEnv, err := keyFromEnv()
	if err != nil {
		return k, err
	}
	file := cfg.APIKeyFile
	if file == "" {
		file = os.Getenv(keyFileEnv)
	}
	os.Unsetenv(keyFileEnv)
	switch {
	case file != "" && fromEnv != "":
		return k, fmt.Errorf("both %s and an API key file (%s) are given: use one", keyEnv, file)
	case file != "":
		if k.key, err = readKeyFile(file, log); err != nil {
			return k, err
		}
	case fromEnv != "":
		k.key = fromEnv
	case cfg.GenerateKey:
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return k, fmt.Errorf("generate an API key: %w", err)
		}
		k.key, k.generated = hex.EncodeToString(b), true
	}
	return k, nil
}

// keyFromEnv returns the key a re-executed server reads from its pipe,
// or else SESSION_API_KEY, and removes both variables from the
// environment.
func keyFromEnv() (string, error) {
	defer os.Unsetenv(keyEnv)
	fdText, ok := os.LookupEnv(keyFDEnv)
	if !ok {
		return os.Getenv(keyEnv), nil
	}
	os.Unsetenv(keyFDEnv)
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return "", fmt.Errorf("%s=%q is not a descriptor", keyFDEnv, fdText)
	}
	f := os.NewFile(uintptr(fd), "api-key-pipe")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the API key from descriptor %d: %w", fd, err)
	}
	return string(b), nil
}

// readKeyFile reads the key from path (surrounding white space dropped)
// and removes the file, so that the agent cannot read it later, whatever
// its mode. A file that cannot be removed (a read-only mount, a directory
// that is not the server's) is left, and said so once.
func readKeyFile(path string, log *slog.Logger) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("API key file: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	f.Close()
	if err != nil {
		return "", fmt.Errorf("API key file %s: %w", path, err)
	}
	key := strings.TrimSpace(string(b))
	switch {
	case len(b) > maxKeyBytes:
		return "", fmt.Errorf("API key file %s: longer than %d bytes", path, maxKeyBytes)
	case key == "":
		return "", fmt.Errorf("API key file %s is empty", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("the API key file could not be removed after reading: make sure the sandbox user cannot read it",
			"file", path, "error", err)
	}
	return key, nil
}

// printGeneratedKey shows a generated key once, on standard error, in a
// form a shell can paste: actionctl reads SESSION_API_KEY.
func printGeneratedKey(w io.Writer, key string) {
	fmt.Fprintf(w, "\naction-server: generated an API key for this run; clients send it as X-Session-API-Key:\n\n"+
		"    export %s=%s\n\n", keyEnv, key)
}
