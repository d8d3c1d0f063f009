package image

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// Request is one call of Build.
type Request struct {
	Options
	// Force rebuilds from the base image even when an image could be
	// reused.
	Force bool
	// Output receives the builder's output as it comes; nil discards it.
	Output io.Writer
	// ContextDir, when set, is where the build context is written (and
	// kept); otherwise a temporary directory that Build removes.
	ContextDir string
}

// Result says what Build did.
type Result struct {
	Path  Path   // the path taken; PathReuse when nothing was built
	Image string // the exact image: Repo:Tags.Source
	Tags  Tags
	// Tagged are the references that now name the image, the exact one
	// first; with PathReuse only that one.
	Tagged []string
	// From is the image the build started from ("" when reused).
	From     string
	Duration time.Duration
}

// Ref joins a repository and a tag.
func Ref(repo, tag string) string { return repo + ":" + tag }

// Plan computes the tags of r's image and writes its build context (without
// the Dockerfile) into dir. It touches no builder: `actionctl build
// --dry-run` is Plan followed by WriteDockerfile for the scratch path.
func Plan(dir string, o Options) (Tags, error) {
	if err := o.validate(); err != nil {
		return Tags{}, err
	}
	if err := PrepareContext(dir, o); err != nil {
		return Tags{}, err
	}
	return ComputeTags(o, dir)
}

// Build makes the runtime image of r with b, as OpenHands' runtime builder
// does, cheapest way first:
//
//  1. --force: build from the base image;
//  2. the source tag exists: reuse it, build nothing;
//  3. the lock tag exists: build FROM it, copying only the binary;
//  4. the versioned tag exists: build FROM it, installing the features;
//  5. otherwise build from the base image.
//
// The result is tagged with the source tag, and with the lock tag (and,
// from the base image, the versioned tag) where these do not exist yet, so
// a later build of the same options finds them.
func Build(ctx context.Context, b Builder, r Request) (Result, error) {
	start := time.Now()
	dir := r.ContextDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "action-server-image-")
		if err != nil {
			return Result{}, fmt.Errorf("build context: %w", err)
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	tags, err := Plan(dir, r.Options)
	if err != nil {
		return Result{}, err
	}
	repo := r.repo()
	res := Result{Tags: tags, Image: Ref(repo, tags.Source)}
	source, lock, versioned := res.Image, Ref(repo, tags.Lock), Ref(repo, tags.Versioned)

	// exists asks the builder once per name.
	known := map[string]bool{}
	exists := func(ref string) (bool, error) {
		if ok, seen := known[ref]; seen {
			return ok, nil
		}
		ok, err := b.Exists(ctx, ref)
		if err == nil {
			known[ref] = ok
		}
		return ok, err
	}

	res.Path, res.From = PathScratch, r.BaseImage
	if !r.Force {
		if ok, err := exists(source); err != nil {
			return res, err
		} else if ok {
			res.Path, res.From, res.Tagged = PathReuse, "", []string{source}
			res.Duration = time.Since(start)
			return res, nil
		}
		if ok, err := exists(lock); err != nil {
			return res, err
		} else if ok {
			res.Path, res.From = PathLock, lock
		} else if ok, err := exists(versioned); err != nil {
			return res, err
		} else if ok {
			res.Path, res.From = PathVersioned, versioned
		}
	}

	// Only names that do not exist yet are added besides the source tag:
	// moving the lock tag onto an image with a newer binary would make
	// every later lock build stack one more layer.
	extra := []string{lock}
	if res.Path == PathScratch {
		extra = append(extra, versioned)
	}
	res.Tagged = []string{source}
	for _, ref := range extra {
		ok, err := exists(ref)
		if err != nil {
			return res, err
		}
		if !ok {
			res.Tagged = append(res.Tagged, ref)
		}
	}

	dockerfile, err := Render(r.Options, res.Path, res.From)
	if err != nil {
		return res, err
	}
	if err := WriteDockerfile(dir, dockerfile); err != nil {
		return res, err
	}
	err = b.Build(ctx, BuildRequest{
		Dir:       dir,
		Tags:      res.Tagged,
		Platform:  r.Platform,
		BuildArgs: map[string]string{"ACTION_SERVER_BUILD_TIME": start.UTC().Format(time.RFC3339)},
		Output:    r.Output,
	})
	res.Duration = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("build %s from %s (%s path) with %s: %w", source, res.From, res.Path, b.Name(), err)
	}
	return res, nil
}
