package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/image"
)

func (a *app) buildCmd() *cobra.Command {
	var (
		o         image.Options
		noBrowser bool
		force     bool
		dryRun    string
		builder   string
		storage   string
	)
	c := &cobra.Command{
		Use:   "build --base-image IMAGE",
		Short: "Build the runtime image: a base image plus action-server and the features chosen",
		Long: `Builds the runtime image on top of a Debian/Ubuntu-family base image, with
the static action-server at /openhands/bin/action-server as its entrypoint,
and only the packages the chosen features need.

Images are named with three tags, <repo>:as_v<version>_...: versioned (this
version and base), lock (these dependencies) and source (this binary too).
The cheapest way is taken: the exact image is reused when it exists; else
the lock image gets only the new binary; else the versioned image gets the
features again; else everything is built from the base image. --force
always builds from the base image.

--dry-run DIR writes the build context (its Dockerfile for the path from the
base image) and prints the tags, without building.`,
		Example: `  actionctl build --base-image debian:bookworm
  actionctl build --base-image python:3.12-slim --plugins agent_skills,jupyter --repo ghcr.io/me/runtime
  actionctl build --base-image ubuntu:24.04 --no-browser --extra-deps 'apt-get update && apt-get install -y make'
  actionctl build --base-image debian:bookworm --dry-run ./ctx`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Browser = !noBrowser
			o.Version = version
			if o.Binary == "" {
				bin, err := serverNextToMe()
				if err != nil {
					return &usageError{err}
				}
				o.Binary = bin
			}
			if dryRun != "" {
				return a.dryRun(o, dryRun)
			}
			b, err := pickBuilder(cmd.Context(), builder, storage)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "actionctl: building with %s\n", b.Name())
			res, err := image.Build(cmd.Context(), b, image.Request{Options: o, Force: force, Output: a.stderr})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(buildJSON{Path: res.Path, Image: res.Image, Tags: res.Tags, Tagged: res.Tagged,
					From: res.From, Builder: b.Name(), Seconds: res.Duration.Seconds()})
			}
			if res.Path == image.PathReuse {
				fmt.Fprintf(a.stdout, "path: reuse (%s exists; nothing built)\n", res.Image)
			} else {
				fmt.Fprintf(a.stdout, "path: %s (from %s, %.1fs)\n", res.Path, res.From, res.Duration.Seconds())
			}
			a.printTags(res.Tags, o)
			fmt.Fprintf(a.stdout, "image: %s\n", res.Image)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.BaseImage, "base-image", "", "image to build on (Debian/Ubuntu family)")
	f.StringVar(&o.Repo, "repo", image.DefaultRepo, "repository of the tags")
	f.BoolVar(&force, "force", false, "build from the base image even when an image could be reused")
	f.StringVar(&dryRun, "dry-run", "", "write the build context to `DIR` and print the tags; build nothing")
	f.StringVar(&builder, "builder", "auto", "docker, buildah, or auto: docker when an engine answers and docker buildx works, else buildah")
	f.StringVar(&storage, "storage-driver", "", "buildah's storage driver, e.g. vfs (default: buildah's own)")
	f.StringVar(&o.Platform, "platform", "", "target platform, e.g. linux/arm64 (the binary must match)")
	f.BoolVar(&noBrowser, "no-browser", false, "leave Chromium out; the image's server refuses browser actions")
	f.BoolVar(&o.NoAgentTools, "no-agent-tools", false, "leave out the tools agents expect (python, rg, curl, ps/pkill, build-essential)")
	f.StringSliceVar(&o.Plugins, "plugins", nil, "plugins to install and start, comma-separated: jupyter, agent_skills, vscode")
	f.StringVar(&o.ExtraDeps, "extra-deps", "", "a shell command run as root after the packages are in")
	f.StringVar(&o.User, "username", "openhands", "sandbox user the image creates")
	f.IntVar(&o.UID, "user-id", 1000, "uid of that user")
	f.StringVar(&o.Binary, "server-binary", "", "static action-server to bake in (default: the one next to actionctl)")
	_ = c.MarkFlagRequired("base-image")
	return c
}

type buildJSON struct {
	Path    image.Path `json:"path"`
	Image   string     `json:"image"`
	Tags    image.Tags `json:"tags"`
	Tagged  []string   `json:"tagged"`
	From    string     `json:"from,omitempty"`
	Builder string     `json:"builder,omitempty"`
	Seconds float64    `json:"seconds"`
}

func (a *app) printTags(t image.Tags, o image.Options) {
	repo := o.Repo
	fmt.Fprintf(a.stdout, "versioned: %s\nlock: %s\nsource: %s\n",
		image.Ref(repo, t.Versioned), image.Ref(repo, t.Lock), image.Ref(repo, t.Source))
}

func (a *app) dryRun(o image.Options, dir string) error {
	tags, err := image.Plan(dir, o)
	if err != nil {
		return err
	}
	dockerfile, err := image.Render(o, image.PathScratch, o.BaseImage)
	if err != nil {
		return err
	}
	if err := image.WriteDockerfile(dir, dockerfile); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(buildJSON{Path: image.PathScratch, Image: image.Ref(o.Repo, tags.Source), Tags: tags, From: o.BaseImage})
	}
	fmt.Fprintf(a.stdout, "context: %s (Dockerfile for the path from %s)\n", dir, o.BaseImage)
	a.printTags(tags, o)
	return nil
}

// serverNextToMe finds the action-server that make build put beside
// actionctl.
func serverNextToMe() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find action-server: %w; give --server-binary", err)
	}
	bin := filepath.Join(filepath.Dir(self), "action-server")
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("no action-server next to actionctl (%s); give --server-binary", bin)
	}
	return bin, nil
}

// pickBuilder returns the builder asked for; auto prefers a Docker engine
// that answers, then buildah.
func pickBuilder(ctx context.Context, name, storageDriver string) (image.Builder, error) {
	docker := image.Docker{}
	buildah := image.Buildah{StorageDriver: storageDriver}
	switch name {
	case "docker":
		return docker, nil
	case "buildah":
		return buildah, nil
	case "auto":
		if docker.Available(ctx) {
			return docker, nil
		}
		if buildah.Available() {
			return buildah, nil
		}
		return nil, errors.New("no builder: no Docker engine with buildx answers and buildah is not installed (apt-get install buildah)")
	}
	return nil, &usageError{fmt.Errorf("--builder %q: want auto, docker or buildah", name)}
}
