package image

import (
	"debug/elf"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	actionserver "github.com/actionserver/actionserver"
)

// Names inside the build context.
const (
	dockerfileName  = "Dockerfile"
	binaryName      = "action-server"
	codeServerName  = "install-code-server.sh"
	contextDirMode  = 0o755
	contextFileMode = 0o644
)

// PrepareContext fills dir with what every build path of o copies in: the
// binary and, for vscode, its installer. The Dockerfile comes later, once
// the path is known (WriteDockerfile).
func PrepareContext(dir string, o Options) error {
	if err := checkBinary(o.Binary, o.Platform); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, contextDirMode); err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	if err := copyFile(o.Binary, filepath.Join(dir, binaryName), 0o755); err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	if o.hasPlugin("vscode") {
		if err := os.WriteFile(filepath.Join(dir, codeServerName), actionserver.InstallCodeServer, 0o755); err != nil {
			return fmt.Errorf("build context: %w", err)
		}
	}
	return nil
}

// WriteDockerfile writes the rendered Dockerfile into the context.
func WriteDockerfile(dir, dockerfile string) error {
	if err := os.WriteFile(filepath.Join(dir, dockerfileName), []byte(dockerfile), contextFileMode); err != nil {
		return fmt.Errorf("build context: %w", err)
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	// OpenFile's mode is filtered by the umask; the image needs 0755.
	return os.Chmod(dst, mode)
}

// goarch maps ELF machines to the architecture part of a platform.
var goarch = map[elf.Machine]string{
	elf.EM_X86_64:  "amd64",
	elf.EM_AARCH64: "arm64",
	elf.EM_ARM:     "arm",
	elf.EM_386:     "386",
	elf.EM_PPC64:   "ppc64le",
	elf.EM_S390:    "s390x",
	elf.EM_RISCV:   "riscv64",
}

// checkBinary refuses what cannot run in an arbitrary base image: a
// binary that is not a Linux ELF executable, one linked against a dynamic
// loader (the base may have another libc, or none), or one for another
// architecture than the platform asked for.
func checkBinary(path, platform string) error {
	if path == "" {
		return errors.New("no action-server binary given")
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("action-server binary %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("action-server binary %s is dynamically linked; build it with CGO_ENABLED=0 (make build)", path)
		}
	}
	if platform != "" {
		_, arch, _ := strings.Cut(platform, "/")
		arch, _, _ = strings.Cut(arch, "/") // linux/arm/v7 → arm
		if got := goarch[f.Machine]; got != arch {
			return fmt.Errorf("action-server binary %s is for %s, not for platform %s", path, f.Machine, platform)
		}
	}
	return nil
}

// contextHash is the md5 of every file of the build context but the
// Dockerfile: names and contents, in a fixed order.
func contextHash(dir string) (string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			if rel != dockerfileName {
				names = append(names, rel)
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash build context: %w", err)
	}
	slices.Sort(names)
	return md5Hex(func(h hash.Hash) error {
		for _, name := range names {
			fmt.Fprintf(h, "%s\x00", filepath.ToSlash(name))
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				return fmt.Errorf("hash build context: %w", err)
			}
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("hash build context: %w", err)
			}
			h.Write([]byte{0})
		}
		return nil
	})
}
