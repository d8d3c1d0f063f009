package image

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/big"
	"strings"
)

// TagPrefix starts every tag this package makes, so our images never
// collide with OpenHands' own "oh_v" tags in a shared repository.
const TagPrefix = "as_v"

// Tags are the three names of one runtime image, from the most general to
// the most exact. Each is a tag only; Ref joins it to a repository.
type Tags struct {
	// Versioned names an image for this server version and base image,
	// whatever the features: a starting point that already holds most
	// packages.
	Versioned string
	// Lock names an image with exactly these dependencies: base image,
	// features, user and template. Only the binary may differ.
	Lock string
	// Source names exactly this image: the lock plus this binary.
	Source string
}

// maxBaseInTag is how much of the sanitised base image name the versioned
// tag keeps (its end: the tag part is the most telling).
const maxBaseInTag = 96

// versionedTag is as_v<version>_<base image, sanitised>.
func versionedTag(version, baseImage string) string {
	return TagPrefix + sanitizeTagPart(version) + "_" + sanitizeBaseImage(baseImage)
}

// sanitizeBaseImage spells an image reference with only the characters a
// tag allows, as OpenHands does: '/' becomes "_s_", ':' becomes "_t_",
// lower case, at most the last 96 characters. Anything else a tag cannot
// hold (a digest's '@', say) becomes '_'.
func sanitizeBaseImage(ref string) string {
	s := strings.ToLower(ref)
	s = strings.ReplaceAll(s, "/", "_s_")
	s = strings.ReplaceAll(s, ":", "_t_")
	s = sanitizeTagPart(s)
	if len(s) > maxBaseInTag {
		s = s[len(s)-maxBaseInTag:]
	}
	return s
}

// sanitizeTagPart replaces what a tag may not contain: tags are
// [A-Za-z0-9_.-].
func sanitizeTagPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}

// shortHash turns an md5 hex digest into at most 16 base-36 digits, least
// significant first, as OpenHands' runtime builder does: shorter tags, the
// same uniqueness for any practical number of images.
func shortHash(hexDigest string) string {
	n, ok := new(big.Int).SetString(hexDigest, 16)
	if !ok {
		panic(fmt.Sprintf("image: %q is not a hex digest", hexDigest))
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	base := big.NewInt(36)
	var b strings.Builder
	mod := new(big.Int)
	for n.Sign() > 0 && b.Len() < 16 {
		n.DivMod(n, base, mod)
		b.WriteByte(digits[mod.Int64()])
	}
	return b.String()
}

// md5Hex feeds each part to one md5 and returns its hex digest.
func md5Hex(write func(h hash.Hash) error) (string, error) {
	h := md5.New()
	if err := write(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lockHash covers everything that decides the image's layers but the
// binary: the base image, the features and user (through the options'
// canonical form), the packages they need, and the template itself.
func lockHash(o Options) (string, error) {
	return md5Hex(func(h hash.Hash) error {
		io.WriteString(h, o.BaseImage)
		io.WriteString(h, "\n")
		io.WriteString(h, o.canonical())
		io.WriteString(h, "\n")
		io.WriteString(h, o.template())
		return nil
	})
}

// ComputeTags names the image that Options and the build context in
// contextDir make. The source tag covers every file of the context but the
// Dockerfile, whose text differs by build path for the same image.
func ComputeTags(o Options, contextDir string) (Tags, error) {
	if err := o.validate(); err != nil {
		return Tags{}, err
	}
	lock, err := lockHash(o)
	if err != nil {
		return Tags{}, err
	}
	src, err := contextHash(contextDir)
	if err != nil {
		return Tags{}, err
	}
	v := TagPrefix + sanitizeTagPart(o.Version)
	return Tags{
		Versioned: versionedTag(o.Version, o.BaseImage),
		Lock:      v + "_" + shortHash(lock),
		Source:    v + "_" + shortHash(lock) + "_" + shortHash(src),
	}, nil
}
