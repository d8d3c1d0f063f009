// Package kubernetes holds the Kubernetes manifests for the runtime image.
// It has no code: its tests decode the manifests with the Kubernetes API
// types and check them against the server's own flag parser.
package kubernetes
