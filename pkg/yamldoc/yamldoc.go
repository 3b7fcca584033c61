// Package yamldoc holds the checks every YAML input of p4ctl shares
// (controller configurations, sites files): one document per file.
package yamldoc

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Trailing reports what follows the first YAML (or JSON) document of
// data: a second document after `---`, or text after the end of a JSON
// value. yaml.Unmarshal reads the first
// document alone and drops the rest without a word (a second document
// with bound: 99999999 was ignored). It returns the line where the extra
// content starts and a message, or "" when there is none (an empty
// trailing document, comments and blank lines are fine).
func Trailing(data []byte) (int, string) {
	_, line, msg, _ := Decode(data)
	return line, msg
}

// Decode parses the first document of data into root (as yaml.Unmarshal
// does, err being its syntax error) and reports, as Trailing does, what
// follows it — one parse, where Unmarshal then Trailing would parse the
// document twice.
func Decode(data []byte) (root *yaml.Node, line int, msg string, err error) {
	d := yaml.NewDecoder(bytes.NewReader(data))
	var first, next yaml.Node
	if err := d.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return &yaml.Node{}, 0, "", nil // empty input: as Unmarshal, no document
		}
		return nil, 0, "", err
	}
	line, msg = trailing(data, d, &first, &next)
	return &first, line, msg, nil
}

// trailing decodes what follows first with d (into next).
func trailing(data []byte, d *yaml.Decoder, first, next *yaml.Node) (int, string) {
	err := d.Decode(next)
	switch {
	case errors.Is(err, io.EOF):
		return 0, ""
	case err != nil:
		return lineAfter(data, lastLine(first)), "text after the end of the document (JSON followed by more text?): p4ctl reads one document per file; remove it"
	}
	if empty(next) {
		return 0, ""
	}
	return next.Line, "a second YAML document (after ---): p4ctl reads one document per file; merge it into the first or remove it"
}

// lastLine is the largest line of any node under n.
func lastLine(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLine(c))
	}
	return l
}

// lineAfter returns the first line after line whose text is more than
// blanks, comments and closing brackets (the end of a JSON value), or
// line when there is none (the extra text shares its line).
func lineAfter(data []byte, line int) int {
	lines := strings.Split(string(data), "\n")
	for i := line; i < len(lines); i++ {
		s := strings.TrimSpace(lines[i])
		if j := strings.Index(s, "#"); j == 0 {
			continue
		}
		if strings.Trim(s, "}], \t") != "" {
			return i + 1
		}
	}
	return line
}

// empty reports whether a decoded document holds nothing (only comments,
// or a bare ---).
func empty(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return true
		}
		n = n.Content[0]
	}
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}
