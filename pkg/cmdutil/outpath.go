package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CheckOutputFile makes sure a result can be written to path before the
// work that produces it starts (a long loadgen run is not lost to a bad
// --json): path must not be a directory, its directory must exist, and the
// file must be creatable. A file created only to check is removed again.
// flag names the flag in the usage error.
func CheckOutputFile(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return Usagef("%s %s is a directory: give a file name (e.g. %s)", flag, path, filepath.Join(path, "run."+strings.TrimLeft(flag, "-")))
	case err == nil:
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return Usagef("%s %s: cannot write it: %v", flag, path, err)
		}
		return f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return Usagef("%s %s: %v", flag, path, err)
	}
	if dst, err := os.Stat(filepath.Dir(path)); err != nil || !dst.IsDir() {
		return Usagef("%s %s: directory %s does not exist", flag, path, filepath.Dir(path))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Usagef("%s %s: cannot create it: %v", flag, path, err)
	}
	f.Close()
	return os.Remove(path)
}

// CheckOutputDir makes sure plots can be written to dir before the work
// starts: it creates dir (and its parents) and a file in it, which it
// removes. "" means no plots.
func CheckOutputDir(flag, dir string) error {
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return Usagef("%s %s is a file, not a directory", flag, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Usagef("%s %s: cannot create the directory: %v", flag, dir, err)
	}
	f, err := os.CreateTemp(dir, ".p4ctl-write-check-*")
	if err != nil {
		return Usagef("%s %s: cannot write in it: %v", flag, dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("%s %s: remove %s: %w", flag, dir, name, err)
	}
	return nil
}

// WriteFile creates path and writes it with fn, reporting either failure.
func WriteFile(path string, fn func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}
