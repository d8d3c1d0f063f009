package container

import (
	"context"
	"path/filepath"
	"testing"

	mc "github.com/moby/moby/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockDown_TakesEveryPrivilegeAway(t *testing.T) {
	var hc mc.HostConfig
	LockDown(&hc)
	assert.Equal(t, []string{"ALL"}, hc.CapDrop)
	assert.Contains(t, hc.SecurityOpt, "no-new-privileges")
	require.NotNil(t, hc.PidsLimit)
	assert.Equal(t, int64(512), *hc.PidsLimit)
	assert.True(t, hc.ReadonlyRootfs)
	assert.Contains(t, hc.Tmpfs, "/workspace")
	assert.Contains(t, hc.Tmpfs, "/tmp")
}

func TestCandidates_DockerHostFirstThenDockerThenPodman(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///somewhere/docker.sock")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	assert.Equal(t, []string{
		"unix:///somewhere/docker.sock",
		"unix:///var/run/docker.sock",
		"unix:///run/podman/podman.sock",
		"unix:///run/user/1000/podman/podman.sock",
	}, Candidates())
}

func TestConnect_SaysWhatToStartWhenNoEngineAnswers(t *testing.T) {
	sock := "unix://" + filepath.Join(t.TempDir(), "none.sock")
	_, err := Connect(context.Background(), sock)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no container engine answers")
	assert.Contains(t, err.Error(), "podman system service")
	assert.Contains(t, err.Error(), sock)
}
