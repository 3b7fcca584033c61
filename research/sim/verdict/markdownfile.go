package verdict

import (
	"fmt"
	"os"
)

// WriteMarkdownFile writes a figures table as Markdown (WriteMarkdown) to
// path; "" writes nothing. flag names the flag that gave path, in errors.
func WriteMarkdownFile(flag, path, source string, figs []Figure) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if err := WriteMarkdown(f, source, figs); err != nil {
		f.Close()
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return nil
}
