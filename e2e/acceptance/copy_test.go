package acceptance

import (
	"archive/zip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of the copy tests of tests/runtime/test_bash.py: the host's
// copy_to and copy_from against /upload_file and /download_files.
//
// Upstream's temp_dir is also the directory mounted as the workspace, so
// a file it makes there is in the sandbox before any copy. Here the
// host's files live in a directory of their own, outside the sandbox: the
// copy is the only way they get in.

// createTestFile is the suite's _create_test_file.
func createTestFile(t *testing.T, hostDir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(hostDir, "test_file.txt"), []byte("Hello, World!"), 0o644))
}

// createHostTestDirWithFiles is the suite's _create_host_test_dir_with_files.
func createHostTestDirWithFiles(t *testing.T, testDir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(testDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(testDir, "file1.txt"), []byte("File 1 content"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(testDir, "file2.txt"), []byte("File 2 content"), 0o644))
}

// test_copy_single_file
func TestCopyTo_SingleFile(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		hostDir := t.TempDir()
		sandboxDir := rt.workspace()
		sandboxFile := filepath.Join(sandboxDir, "test_file.txt")
		createTestFile(t, hostDir)

		require.NoError(t, rt.copyTo(filepath.Join(hostDir, "test_file.txt"), sandboxDir, false))

		obs := rt.runCmd("ls -alh " + sandboxDir)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "test_file.txt", obs)

		obs = rt.runCmd("cat " + sandboxFile)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Hello, World!", obs)
	})
}

// test_copy_directory_recursively
func TestCopyTo_DirectoryRecursively(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		sandboxDir := rt.workspace()
		tempDirCopy := filepath.Join(t.TempDir(), "test_dir")
		createHostTestDirWithFiles(t, tempDirCopy)

		require.NoError(t, rt.copyTo(tempDirCopy, sandboxDir, true))

		obs := rt.runCmd("ls -alh " + sandboxDir)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "test_dir", obs)
		assert.NotContains(t, obs.Content, "file1.txt", obs)
		assert.NotContains(t, obs.Content, "file2.txt", obs)

		obs = rt.runCmd("ls -alh " + sandboxDir + "/test_dir")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "file1.txt", obs)
		assert.Contains(t, obs.Content, "file2.txt", obs)

		obs = rt.runCmd("cat " + sandboxDir + "/test_dir/file1.txt")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "File 1 content", obs)
	})
}

// test_copy_to_non_existent_directory: the destination is a directory,
// made when missing.
func TestCopyTo_NonExistentDirectoryIsCreated(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		hostDir := t.TempDir()
		sandboxDir := rt.workspace()
		createTestFile(t, hostDir)

		require.NoError(t, rt.copyTo(filepath.Join(hostDir, "test_file.txt"), sandboxDir+"/new_dir", false))

		obs := rt.runCmd("cat " + sandboxDir + "/new_dir/test_file.txt")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Hello, World!", obs)
	})
}

// test_overwrite_existing_file
func TestCopyTo_OverwritesExistingFile(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		hostTempDir := t.TempDir()
		sandboxDir := rt.workspace()
		sandboxFile := filepath.Join(sandboxDir, "test_file.txt")

		obs := rt.runCmd("ls -alh " + sandboxDir)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.NotContains(t, obs.Content, "test_file.txt", obs) // the initial state

		obs = rt.runCmd("touch " + sandboxFile)
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("ls -alh " + sandboxDir)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "test_file.txt", obs)

		obs = rt.runCmd("cat " + sandboxFile)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Equal(t, "", strings.TrimSpace(obs.Content), obs) // an empty file
		assert.NotContains(t, obs.Content, "Hello, World!", obs)

		createTestFile(t, hostTempDir)
		require.NoError(t, rt.copyTo(filepath.Join(hostTempDir, "test_file.txt"), sandboxDir, false))

		obs = rt.runCmd("cat " + sandboxFile)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Hello, World!", obs)
	})
}

// test_copy_non_existent_file. Upstream's source is the sandbox path
// <workspace>/non_existent_file.txt taken as a host path; what matters is
// that it does not exist on the host, which a path in an empty directory
// of the host's ensures.
func TestCopyTo_NonExistentFileFailsOnTheHost(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		sandboxDir := rt.workspace()

		err := rt.copyTo(filepath.Join(t.TempDir(), "non_existent_file.txt"), sandboxDir+"/should_not_exist.txt", false)
		assert.ErrorIs(t, err, fs.ErrNotExist, "upstream expects FileNotFoundError")

		obs := rt.runCmd("ls " + sandboxDir + "/should_not_exist.txt")
		assert.NotEqual(t, 0, obs.exitCode(), "the file should not exist; %v", obs)
	})
}

// test_copy_from_directory. Upstream only checks that copy_from returns a
// path (the host does not look at the status, so that holds for any
// answer); the checks of the zip's entries are this port's, from the
// contract: every file under the path, named relative to it.
func TestCopyFrom_Directory(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		sandboxDir := rt.workspace()
		tempDirCopy := filepath.Join(t.TempDir(), "test_dir")
		createHostTestDirWithFiles(t, tempDirCopy)
		require.NoError(t, rt.copyTo(tempDirCopy, sandboxDir, true))

		result, err := rt.copyFrom(sandboxDir + "/test_dir")
		require.NoError(t, err)
		require.NotEmpty(t, result, "upstream expects a Path")
		t.Cleanup(func() { os.Remove(result) })

		zr, err := zip.OpenReader(result)
		require.NoError(t, err, "the download should be a zip")
		defer zr.Close()
		got := map[string]string{}
		for _, f := range zr.File {
			rc, err := f.Open()
			require.NoError(t, err, f.Name)
			data, err := io.ReadAll(rc)
			rc.Close()
			require.NoError(t, err, f.Name)
			got[f.Name] = string(data)
		}
		assert.Equal(t, map[string]string{"file1.txt": "File 1 content", "file2.txt": "File 2 content"}, got)
	})
}
