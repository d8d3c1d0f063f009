// Package image builds the runtime image: the user's base image plus the
// static action-server binary and the features chosen (browser, plugins).
//
// It is a chain of small steps, each usable alone: Render turns Options into
// a Dockerfile, WriteContext lays out a build context, ComputeTags names the
// result with OpenHands' three-tag scheme (versioned, lock, source), and
// Build walks the reuse-or-rebuild decision tree over a Builder (docker or
// buildah), the only part that touches the outside world.
package image
