package serverflags

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		args string
		want Config
	}{
		{"openhands form", "31234 --working-dir /workspace --plugins agent_skills jupyter --username openhands --user-id 1000",
			Config{Port: 31234, Host: "0.0.0.0", WorkDir: "/workspace", Plugins: []string{"agent_skills", "jupyter"},
				Username: "openhands", UserID: 1000, EnableBrowser: true}},
		{"no browser", "31234 --working-dir /w --username root --user-id 0 --no-enable-browser",
			Config{Port: 31234, Host: "0.0.0.0", WorkDir: "/w", Username: "root", UserID: 0}},
		{"port flag and host", "--port 9000 --host 127.0.0.1",
			Config{Port: 9000, Host: "127.0.0.1", UserID: -1, EnableBrowser: true}},
		{"equals form", "--port=9001 --working-dir=/x --plugins=vscode",
			Config{Port: 9001, Host: "0.0.0.0", WorkDir: "/x", Plugins: []string{"vscode"}, UserID: -1, EnableBrowser: true}},
		{"plugins then port", "--plugins jupyter 8080",
			Config{Port: 8080, Host: "0.0.0.0", Plugins: []string{"jupyter"}, UserID: -1, EnableBrowser: true}},
		{"defaults", "", Config{Port: 8000, Host: "0.0.0.0", UserID: -1, EnableBrowser: true}},
		{"output buffer", "1 --output-buffer 64M",
			Config{Port: 1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true, OutputBuffer: 64 << 20}},
		{"output budget", "1 --output-budget=1G",
			Config{Port: 1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true, OutputBudget: 1 << 30}},
		{"browser eager", "1 --browser-eager",
			Config{Port: 1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true, BrowserEager: true}},
		{"security", "1 --allow-origin https://a.example --allow-origin=http://b.example:8080 --allow-host sandbox --api-key-file /run/key --generate-key",
			Config{Port: 1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true, AllowOrigins: []string{"https://a.example", "http://b.example:8080"},
				AllowHosts: []string{"sandbox"}, APIKeyFile: "/run/key", GenerateKey: true}},
		{"eval env", "1 --browsergym-eval-env miniwob.click",
			Config{Port: 1, Host: "0.0.0.0", UserID: -1, EnableBrowser: true, EvalEnv: "miniwob.click"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.Fields(tc.args))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParse_Errors(t *testing.T) {
	cases := []struct{ args, want string }{
		{"abc", `"abc" is not a port number`},
		{"1 2", `unexpected argument "2"`},
		{"--frobnicate", "unknown flag --frobnicate"},
		{"--working-dir", "flag --working-dir needs a value"},
		{"--user-id x", "is not a user id"},
		{"--plugins", "--plugins needs at least one name"},
		{"--output-buffer 8X", "is not a size"},
		{"--output-budget 0", "--output-budget: \"0\" is not a size"},
		{"--browser-eager=yes", "flag --browser-eager takes no value"},
		{"--allow-origin example.com", "is not an origin like"},
		{"--allow-origin https://a.example/path", "is not an origin like"},
		{"--allow-host a:80", "is not a host name"},
		{"--generate-key=1", "takes no value"},
		{"--no-enable-browser --browsergym-eval-env x", "Browser environment is not enabled in config, but browsergym_eval_env is set"},
	}
	for _, tc := range cases {
		_, err := Parse(strings.Fields(tc.args))
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}
