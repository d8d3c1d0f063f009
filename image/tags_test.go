package image

import (
	"hash"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShortHash_MatchesOpenHands(t *testing.T) {
	// The example of OpenHands' runtime builder, and edge cases of the
	// base-36, least-significant-first, 16-digit rule.
	tests := []struct{ hex, want string }{
		{"b08f254d76b1c6a7ad924708c0032251", "pma2wc71uq3c9a85"},
		{"0", ""},
		{"23", "z"},                           // 35
		{"24", "01"},                          // 36: least significant digit first
		{"ffffffffffffffff", "fsgs46211e5w3"}, // 2^64-1 is 3w5e11264sgsf in base 36
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shortHash(tt.hex), tt.hex)
	}
	assert.Len(t, shortHash("ffffffffffffffffffffffffffffffff"), 16, "truncated to 16 digits")
}

func TestSanitizeBaseImage(t *testing.T) {
	tests := []struct{ ref, want string }{
		{"debian:bookworm", "debian_t_bookworm"},
		{"nikolaik/python-nodejs:python3.12-nodejs22", "nikolaik_s_python-nodejs_t_python3.12-nodejs22"},
		{"Localhost:5000/My/Img:V1", "localhost_t_5000_s_my_s_img_t_v1"},
		{"debian@sha256:abc", "debian_sha256_t_abc"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, sanitizeBaseImage(tt.ref), tt.ref)
	}
	long := "registry.example.com/" + string(make([]byte, 0)) + "a-very-long-organisation-name/and-an-even-longer-image-name-that-goes-on:with-a-long-tag-as-well"
	got := sanitizeBaseImage(long)
	assert.Len(t, got, maxBaseInTag)
	assert.Equal(t, "with-a-long-tag-as-well", got[len(got)-len("with-a-long-tag-as-well"):], "the end is kept")
}

// knownContext is a build context with fixed contents, so its tags are
// fixed too.
func knownContext(t *testing.T, binary string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, binaryName), []byte(binary), 0o755))
	return dir
}

func TestComputeTags_KnownInputs(t *testing.T) {
	o := Options{BaseImage: "debian:bookworm", Version: "1.2.3", Template: "FROM {{.FromImage}}\n", NoAgentTools: true}
	dir := knownContext(t, "binary one")
	tags, err := ComputeTags(o, dir)
	require.NoError(t, err)
	// Fixed inputs, fixed names: a change here changes every user's tags,
	// so it must be deliberate.
	assert.Equal(t, Tags{
		Versioned: "as_v1.2.3_debian_t_bookworm",
		Lock:      "as_v1.2.3_rgt4kapwn6pulpu5",
		Source:    "as_v1.2.3_rgt4kapwn6pulpu5_csszbb6awnmppy1e",
	}, tags)
	// They are md5("debian:bookworm\n" + canonical + "\n" + template) and
	// md5("action-server\x00binary one\x00"), shortened.
	lock := shortHash(mustMD5(t, "debian:bookworm\n"+o.canonical()+"\nFROM {{.FromImage}}\n"))
	assert.Equal(t, "as_v1.2.3_"+lock, tags.Lock)
	assert.Equal(t, "as_v1.2.3_"+lock+"_"+shortHash(mustMD5(t, "action-server\x00binary one\x00")), tags.Source)
	assert.Equal(t, "browser=false plugins= user=openhands uid=1000 platform= packages= extra=\"\"", o.canonical())
}

func TestComputeTags_WhatChangesWhich(t *testing.T) {
	base := Options{BaseImage: "debian:bookworm", Version: "1.2.3"}
	dir := knownContext(t, "binary one")
	ref, err := ComputeTags(base, dir)
	require.NoError(t, err)

	tests := []struct {
		name                    string
		change                  func(o *Options) string // returns the binary's contents
		versioned, lock, source bool                    // which tags change
	}{
		{"binary", func(o *Options) string { return "binary two" }, false, false, true},
		{"browser", func(o *Options) string { o.Browser = true; return "binary one" }, false, true, true},
		{"plugins", func(o *Options) string { o.Plugins = []string{"jupyter"}; return "binary one" }, false, true, true},
		{"plugin order does not matter", func(o *Options) string { return "binary one" }, false, false, false},
		{"user", func(o *Options) string { o.User, o.UID = "dev", 1001; return "binary one" }, false, true, true},
		{"agent tools", func(o *Options) string { o.NoAgentTools = true; return "binary one" }, false, true, true},
		{"extra deps", func(o *Options) string { o.ExtraDeps = "true"; return "binary one" }, false, true, true},
		{"template", func(o *Options) string { o.Template = "FROM x\n"; return "binary one" }, false, true, true},
		{"base image", func(o *Options) string { o.BaseImage = "ubuntu:24.04"; return "binary one" }, true, true, true},
		{"version", func(o *Options) string { o.Version = "1.2.4"; return "binary one" }, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			bin := tt.change(&o)
			got, err := ComputeTags(o, knownContext(t, bin))
			require.NoError(t, err)
			assert.Equal(t, tt.versioned, got.Versioned != ref.Versioned, "versioned tag changed")
			assert.Equal(t, tt.lock, got.Lock != ref.Lock, "lock tag changed")
			assert.Equal(t, tt.source, got.Source != ref.Source, "source tag changed")
		})
	}

	a, b := base, base
	a.Plugins, b.Plugins = []string{"jupyter", "agent_skills"}, []string{"agent_skills", "jupyter"}
	ta, err := ComputeTags(a, dir)
	require.NoError(t, err)
	tb, err := ComputeTags(b, dir)
	require.NoError(t, err)
	assert.Equal(t, ta, tb, "the order plugins are named in does not change the image")
}

func TestComputeTags_IgnoresTheDockerfile(t *testing.T) {
	o := Options{BaseImage: "debian:bookworm", Version: "1"}
	dir := knownContext(t, "bin")
	before, err := ComputeTags(o, dir)
	require.NoError(t, err)
	require.NoError(t, WriteDockerfile(dir, "FROM somewhere-else\n"))
	after, err := ComputeTags(o, dir)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the lock and scratch Dockerfiles of one image must give it one source tag")
}

func mustMD5(t *testing.T, s string) string {
	t.Helper()
	h, err := md5Hex(func(h hash.Hash) error { _, err := h.Write([]byte(s)); return err })
	require.NoError(t, err)
	return h
}
