package image

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
)

// Path is how an image is built, or that it is reused.
type Path string

// The build paths of the decision tree, cheapest first.
const (
	// PathReuse: the exact image exists; nothing is built.
	PathReuse Path = "reuse"
	// PathLock builds FROM the lock image and copies only the binary.
	PathLock Path = "lock"
	// PathVersioned builds FROM the versioned image, installing the
	// features' packages again.
	PathVersioned Path = "versioned"
	// PathScratch builds FROM the base image.
	PathScratch Path = "scratch"
)

// templateData is what Dockerfile.tmpl sees.
type templateData struct {
	Path      Path
	FromImage string
	BaseImage string
	Version   string
	Packages  []string
	VSCode    bool
	User      string
	UID       int
	ExtraDeps string
	Cmd       []string
}

// Render returns the Dockerfile for building o along path, FROM fromImage
// (the base image for PathScratch, the versioned or lock image otherwise).
func Render(o Options, path Path, fromImage string) (string, error) {
	if err := o.validate(); err != nil {
		return "", err
	}
	data := templateData{
		Path:      path,
		FromImage: fromImage,
		BaseImage: o.BaseImage,
		Version:   o.Version,
		VSCode:    o.hasPlugin("vscode"),
		User:      o.user(),
		UID:       o.uid(),
		ExtraDeps: o.ExtraDeps,
		Cmd:       o.serverArgs(),
	}
	switch path {
	case PathScratch:
		data.Packages = append(append([]string{}, basePackages...), o.packages()...)
	case PathVersioned:
		data.Packages = o.packages()
	case PathLock:
	default:
		return "", fmt.Errorf("render: no Dockerfile for build path %q", path)
	}
	if fromImage == "" {
		return "", fmt.Errorf("render %s: no image to build from", path)
	}
	t, err := template.New("Dockerfile").Option("missingkey=error").Funcs(template.FuncMap{
		"join": strings.Join,
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
	}).Parse(o.template())
	if err != nil {
		return "", fmt.Errorf("parse Dockerfile template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("render Dockerfile: %w", err)
	}
	return b.String(), nil
}
