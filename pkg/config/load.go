package config

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/p4ctl/p4ctl/pkg/inputfile"
	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/yamldoc"
)

// Problem is one thing wrong with a configuration, located by file, line and
// YAML path (e.g. "regions[2].next_hop.local.servers[1].id").
type Problem struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Path string `json:"path,omitempty"`
	Msg  string `json:"msg"`
}

// Error formats the problem as "file:line: path: msg" (parts that are
// unknown are left out).
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteString(":" + strconv.Itoa(p.Line))
		}
		b.WriteString(": ")
	} else if p.Line > 0 {
		b.WriteString("line " + strconv.Itoa(p.Line) + ": ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// ValidationError lists every problem found in a configuration, in file
// order. Callers test for it with errors.As; its message has one problem
// per line.
type ValidationError struct {
	Problems []Problem
}

// Error joins the problems, one per line.
func (e *ValidationError) Error() string {
	s := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		s[i] = p.Error()
	}
	return strings.Join(s, "\n")
}

// Load reads, parses and validates the configuration file at path. Relative
// paths inside it (TLS files, trace directories, token files) are resolved
// against the file's directory and must exist. Every problem is reported,
// each as "path:line: yaml.path: message".
func Load(path string) (*Config, error) {
	return LoadContext(context.Background(), path)
}

// LoadContext is Load reading the file under ctx (an interrupt ends the
// read) and at most inputfile.MaxSize bytes of it.
func LoadContext(ctx context.Context, path string) (*Config, error) {
	data, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	c.Dir = filepath.Dir(path)
	if err := c.checkFiles(path, data); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse decodes and validates a configuration. file names the input in
// messages (it is not read). It does no I/O: file references are not checked
// (Load does that).
func Parse(data []byte, file string) (*Config, error) {
	rootp, line, what, err := yamldoc.Decode(data)
	if err != nil {
		return nil, &ValidationError{Problems: []Problem{yamlSyntaxProblem(file, err)}}
	}
	if what != "" {
		return nil, &ValidationError{Problems: []Problem{{File: file, Line: line, Msg: what}}}
	}
	root := *rootp
	idx := newIndex(&root)
	var probs []Problem
	if doc := documentNode(&root); doc != nil {
		checkNode(doc, reflect.TypeOf(Config{}), "", func(n *yamlv3.Node, path, msg string) {
			probs = append(probs, Problem{File: file, Line: n.Line, Path: path, Msg: msg})
		})
	} else {
		probs = append(probs, Problem{File: file, Msg: "empty configuration"})
	}
	if len(probs) > 0 {
		return nil, sortProblems(probs)
	}
	var c Config
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		// checkNode accepts only what decodes; this is a safety net.
		return nil, &ValidationError{Problems: []Problem{{File: file, Msg: err.Error()}}}
	}
	var extra []Problem
	if l, ok := idx["policy.hysteresis"]; ok && c.Policy.Hysteresis == nil {
		// A key with nothing under it decodes as null, i.e. off: say so
		// rather than turn it off silently.
		extra = append(extra, Problem{File: file, Line: l, Path: "policy.hysteresis",
			Msg: "empty: write hysteresis: {} for the defaults (" + regions.DefaultHysteresis().String() + "), or leave it out for none"})
	}
	if err := c.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			for i := range ve.Problems {
				ve.Problems[i].File = file
				ve.Problems[i].Line = idx.line(ve.Problems[i].Path)
			}
			return nil, sortProblems(append(ve.Problems, extra...))
		}
		return nil, err
	}
	if len(extra) > 0 {
		return nil, sortProblems(extra)
	}
	return &c, nil
}

func yamlSyntaxProblem(file string, err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	// go-yaml reports "line N: ..." for syntax errors.
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ":"); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line = n
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	return Problem{File: file, Line: line, Msg: "invalid YAML: " + msg}
}

func sortProblems(p []Problem) *ValidationError {
	sort.SliceStable(p, func(i, j int) bool { return p[i].Line < p[j].Line })
	return &ValidationError{Problems: p}
}

func documentNode(n *yamlv3.Node) *yamlv3.Node {
	if n.Kind == yamlv3.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == 0 || (n.Kind == yamlv3.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	return n
}

// index maps YAML paths to the line of the node (or mapping key) there.
type index map[string]int

func newIndex(root *yamlv3.Node) index {
	idx := index{}
	if doc := documentNode(root); doc != nil {
		idx[""] = doc.Line
		budget := nodeBudget(doc)
		idx.walk(doc, "", 0, &budget)
	}
	return idx
}

// maxNodes bounds how many nodes the walkers visit beyond those written,
// aliases expanded: a few aliases can otherwise describe an exponentially
// large document. The budget is maxNodes plus twice the nodes the file
// itself holds (nodeBudget), so that large written configurations (10 000
// sites × 32 regions, docs/SCALING.md) load while a file that expands
// exponentially is still refused.
const maxNodes = 1 << 16

// nodeBudget is how many nodes the walkers may visit for document n.
func nodeBudget(n *yamlv3.Node) int { return maxNodes + 2*writtenNodes(n) }

// writtenNodes counts the nodes of n as written (aliases not followed).
func writtenNodes(n *yamlv3.Node) int {
	c := 1
	for _, k := range n.Content {
		c += writtenNodes(k)
	}
	return c
}

func (idx index) walk(n *yamlv3.Node, path string, depth int, budget *int) {
	if depth > 64 || *budget <= 0 {
		return
	}
	*budget--
	n = resolveAlias(n)
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				idx.walk(v, path, depth+1, budget)
				continue
			}
			p := join(path, k.Value)
			if _, ok := idx[p]; !ok {
				idx[p] = k.Line
			}
			idx.walk(v, p, depth+1, budget)
		}
	case yamlv3.SequenceNode:
		for i, e := range n.Content {
			p := path + "[" + strconv.Itoa(i) + "]"
			idx[p] = e.Line
			idx.walk(e, p, depth+1, budget)
		}
	}
}

// line returns the line of path, or of its nearest ancestor present in the
// file (a missing field is reported where its parent is).
func (idx index) line(path string) int {
	for {
		if l, ok := idx[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func resolveAlias(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n.Kind == yamlv3.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

var timeType = reflect.TypeFor[time.Time]()

var electionIDType = reflect.TypeFor[ElectionID]()

// yaml11Bools are plain scalars YAML 1.1 (and so sigs.k8s.io/yaml) reads as
// booleans, although YAML 1.2 reads them as strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true,
	"no": true, "No": true, "NO": true, "on": true, "On": true, "ON": true,
	"off": true, "Off": true, "OFF": true,
}

// checkNode checks that n has the shape Go type t decodes from: known
// fields only, scalars of the right kind and range, text types that parse.
// It reports every problem with the node's line.
func checkNode(n *yamlv3.Node, t reflect.Type, path string, report func(*yamlv3.Node, string, string)) {
	w := &checker{report: report, budget: nodeBudget(n), limit: nodeBudget(n)}
	w.check(n, t, path, 0)
}

type checker struct {
	report func(*yamlv3.Node, string, string)
	budget int
	limit  int
	full   bool
}

func (w *checker) check(n *yamlv3.Node, t reflect.Type, path string, depth int) {
	report := w.report
	if depth > 64 {
		report(n, path, "nesting too deep")
		return
	}
	if w.budget--; w.budget <= 0 {
		if !w.full {
			report(n, path, fmt.Sprintf("document too large (more than %d nodes with aliases expanded)", w.limit))
			w.full = true
		}
		return
	}
	n = resolveAlias(n)
	if n.Kind == yamlv3.AliasNode {
		report(n, path, "unresolvable alias")
		return
	}
	if n.Kind == yamlv3.ScalarNode && n.Tag == "!!null" {
		return // null decodes as the zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == electionIDType {
		// A number (the low word) or HIGH,LOW (a plain 1,0 is a string).
		if n.Kind != yamlv3.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str" && n.Tag != "!!float") {
			report(n, path, "want a number or HIGH,LOW (e.g. 1,0), got "+describe(n))
			return
		}
		if _, err := ParseElectionID(n.Value); err != nil {
			report(n, path, err.Error())
		}
		return
	}
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		if n.Kind != yamlv3.ScalarNode {
			report(n, path, "want a string, got "+kindName(n))
			return
		}
		v := reflect.New(t).Interface().(encoding.TextUnmarshaler)
		if n.Tag != "!!str" && n.Tag != "!!timestamp" {
			if err := v.UnmarshalText([]byte(n.Value)); err != nil && t != timeType {
				report(n, path, err.Error()) // quoting would not help (min_gain: 5 has no unit)
				return
			}
			report(n, path, fmt.Sprintf("want a string, got %s %q (quote it)", n.ShortTag(), n.Value))
			return
		}
		if err := v.UnmarshalText([]byte(n.Value)); err != nil {
			if t == timeType { // not Go's reference layout (issue 15)
				report(n, path, fmt.Sprintf("%q is not an RFC 3339 time: want e.g. 2022-01-10T00:00:00Z", n.Value))
				return
			}
			report(n, path, err.Error())
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			report(n, path, "want a mapping, got "+kindName(n))
			return
		}
		fields := jsonFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Tag == "!!merge" {
				w.check(v, t, path, depth+1)
				continue
			}
			p := join(path, k.Value)
			f, ok := fields[k.Value]
			if !ok {
				report(k, p, fmt.Sprintf("unknown field %q (known: %s)", k.Value, strings.Join(sortedKeys(fields), ", ")))
				continue
			}
			if seen[k.Value] {
				report(k, p, "field given twice")
			}
			seen[k.Value] = true
			w.check(v, f.Type, p, depth+1)
		}
	case reflect.Map:
		if n.Kind != yamlv3.MappingNode {
			report(n, path, "want a mapping, got "+kindName(n))
			return
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			if k.Kind != yamlv3.ScalarNode || k.Tag != "!!str" {
				report(k, p, "map keys must be strings")
				continue
			}
			if seen[k.Value] {
				report(k, p, "key given twice")
			}
			seen[k.Value] = true
			w.check(v, t.Elem(), p, depth+1)
		}
	case reflect.Slice:
		if n.Kind != yamlv3.SequenceNode {
			report(n, path, "want a list, got "+kindName(n))
			return
		}
		for i, e := range n.Content {
			w.check(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1)
		}
	case reflect.String:
		if n.Kind != yamlv3.ScalarNode {
			report(n, path, "want a string, got "+kindName(n))
			return
		}
		if n.Style == 0 && yaml11Bools[n.Value] {
			report(n, path, fmt.Sprintf("unquoted %q reads as a boolean in YAML 1.1; quote it", n.Value))
			return
		}
		if n.Tag != "!!str" {
			report(n, path, fmt.Sprintf("want a string, got %s %q (quote it)", n.ShortTag(), n.Value))
		}
	case reflect.Bool:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!bool" {
			report(n, path, "want true or false, got "+describe(n))
		}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			report(n, path, "want an integer, got "+describe(n))
			return
		}
		if _, err := strconv.ParseInt(n.Value, 10, t.Bits()); err != nil {
			report(n, path, fmt.Sprintf("want a decimal integer that fits in %d bits, got %q", t.Bits(), n.Value))
		}
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		if n.Kind != yamlv3.ScalarNode || n.Tag != "!!int" {
			report(n, path, "want a non-negative integer, got "+describe(n))
			return
		}
		if _, err := strconv.ParseUint(n.Value, 10, t.Bits()); err != nil {
			report(n, path, fmt.Sprintf("want a decimal integer 0..%d, got %q", uint64(math.MaxUint64)>>(64-t.Bits()), n.Value))
		}
	case reflect.Float64, reflect.Float32:
		if n.Kind != yamlv3.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			report(n, path, "want a number, got "+describe(n))
			return
		}
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !plainDecimal(n.Value) {
			report(n, path, fmt.Sprintf("want a finite decimal number, got %q", n.Value))
		}
	default:
		report(n, path, "unsupported field type "+t.String())
	}
}

// plainDecimal reports whether s is written in decimal (YAML also accepts
// 0x10, 0o17 and 1_000, which JSON does not).
func plainDecimal(s string) bool {
	s = strings.TrimLeft(s, "+-")
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0b") || strings.Contains(s, "_") {
		return false
	}
	return len(s) > 0 && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-')
	}) < 0
}

func kindName(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func describe(n *yamlv3.Node) string {
	if n.Kind == yamlv3.ScalarNode {
		return fmt.Sprintf("%q", n.Value)
	}
	return kindName(n)
}

func jsonFields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				m[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
