package bpfobj

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Compiler is the clang the object is built with (Debian 12's clang-14);
// the byte-for-byte check runs only where it is this one.
const Compiler = "clang-14"

// SourceSum is one C source's SHA-256.
type SourceSum struct {
	Path string // relative to the sources' directory, slash-separated
	Sum  string // hex
}

// SourceSums returns the SHA-256 of every .c and .h file under dir, sorted
// by path.
func SourceSums(dir string) ([]SourceSum, error) {
	var out []SourceSum
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".c") || strings.HasSuffix(path, ".h")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out = append(out, SourceSum{Path: filepath.ToSlash(rel), Sum: hex.EncodeToString(sum[:])})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hash the XDP sources under %s: %w", dir, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
