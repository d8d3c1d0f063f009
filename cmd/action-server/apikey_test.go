package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/serverflags"
)

func TestLoadAPIKey_Sources(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name      string
		env       string // SESSION_API_KEY
		file      string // content of a key file given by --api-key-file; "" for none
		fileEnv   bool   // give the file by SESSION_API_KEY_FILE instead
		generate  bool
		want      string // "generated" for a generated key
		wantError string
	}{
		{name: "none", want: ""},
		{name: "environment", env: "from-env", want: "from-env"},
		{name: "file by flag", file: "from-file\n", want: "from-file"},
		{name: "file by environment", file: "  from-file-env \n", fileEnv: true, want: "from-file-env"},
		{name: "generate without a key", generate: true, want: "generated"},
		{name: "generate with a key given", env: "given", generate: true, want: "given"},
		{name: "both", env: "a", file: "b", wantError: "use one"},
		{name: "an empty file", file: "\n", wantError: "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(keyEnv, tt.env)
			t.Setenv(keyFileEnv, "")
			cfg := serverflags.Config{GenerateKey: tt.generate}
			path := filepath.Join(t.TempDir(), "key")
			if tt.file != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.file), 0o600))
				if tt.fileEnv {
					t.Setenv(keyFileEnv, path)
				} else {
					cfg.APIKeyFile = path
				}
			}
			k, err := loadAPIKey(cfg, quiet)
			if tt.wantError != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantError)
				return
			}
			require.NoError(t, err)
			if tt.want == "generated" {
				assert.True(t, k.generated)
				assert.Len(t, k.key, 48)
			} else {
				assert.False(t, k.generated)
				assert.Equal(t, tt.want, k.key)
			}
			_, set := os.LookupEnv(keyEnv)
			assert.False(t, set, "the key's variable is cleared")
			_, set = os.LookupEnv(keyFileEnv)
			assert.False(t, set, "the key file's variable is cleared")
			if tt.file != "" {
				_, err := os.Stat(path)
				assert.ErrorIs(t, err, os.ErrNotExist, "the key file is removed once read")
			}
		})
	}
}
