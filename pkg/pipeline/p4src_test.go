package pipeline

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/p4ctl/p4ctl/pkg/wire"
)

// repoRoot is the repository root seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// p4Sources lists the .p4 files in dirs (slash paths relative to the
// repository root), sorted: what one `make p4` or `make p4-tna` compiles.
func p4Sources(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		m, err := filepath.Glob(filepath.Join(repoRoot, filepath.FromSlash(dir), "*.p4"))
		if err != nil {
			t.Fatalf("glob %s: %v", dir, err)
		}
		for _, f := range m {
			out = append(out, dir+"/"+filepath.Base(f))
		}
	}
	sort.Strings(out)
	return out
}

// parseSums reads sha256sum output ("<hex>  <path>" per line).
func parseSums(name string, b []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			return nil, fmt.Errorf("%s:%d: want \"<sha256>  <path>\", got %q", name, n, line)
		}
		if _, err := hex.DecodeString(sum); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		sums[path] = sum
	}
	return sums, sc.Err()
}

// TestBuildOutputsMatchSources fails when the sources of committed p4c
// outputs changed (or gained or lost a file) since they were generated:
// p4src/shared + p4src/v1model for p4src/build/v1model (`make p4`), and
// p4src/shared + p4src/tna for p4src/build/tna (`make p4-tna`).
// A PENDING file beside the sums (outputs knowingly older than their
// sources, saying why) turns the failure into a skip quoting its first
// line; once the outputs match again it is an error to keep it.
func TestBuildOutputsMatchSources(t *testing.T) {
	for _, c := range []struct {
		name, sums string
		dirs       []string
		outputs    []string
		remake     string
	}{
		{"v1model", filepath.Join(repoRoot, "p4src", "build", "SOURCES.sha256"),
			[]string{"p4src/shared", "p4src/v1model"}, []string{p4infoPath, bmv2Path}, "make p4` (p4c-bm2-ss on PATH)"},
		{"tna", filepath.Join(repoRoot, "p4src", "build", "tna", "SOURCES.sha256"),
			[]string{"p4src/shared", "p4src/tna"}, []string{tnaP4InfoPath}, "make p4-tna` (p4c-barefoot on PATH)"},
	} {
		t.Run(c.name, func(t *testing.T) { checkSources(t, c.sums, c.dirs, c.outputs, c.remake) })
	}
}

// checkSources compares the sha256sum file sumsPath with the .p4 files of
// dirs, and checks that the outputs it vouches for exist.
func checkSources(t *testing.T, sumsPath string, dirs, outputs []string, remake string) {
	t.Helper()
	b, err := os.ReadFile(sumsPath)
	if errors.Is(err, fs.ErrNotExist) {
		for _, o := range outputs {
			if _, perr := os.Stat(o); perr == nil {
				t.Fatalf("%s is committed without %s: run `%s", o, sumsPath, remake)
			}
		}
		t.Skipf("skip: no committed p4c outputs (%s absent)", sumsPath)
	}
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := parseSums(sumsPath, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range outputs {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s records sources but the output is missing: %v", sumsPath, err)
		}
	}
	var diffs []string
	for _, path := range p4Sources(t, dirs...) {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want, ok := recorded[path]
		switch {
		case !ok:
			diffs = append(diffs, path+" is new since the outputs were generated")
		case want != hex.EncodeToString(sum[:]):
			diffs = append(diffs, path+" changed since the outputs were generated")
		}
		delete(recorded, path)
	}
	for path := range recorded {
		diffs = append(diffs, path+" was compiled but no longer exists")
	}
	stale := len(diffs) > 0
	pending := filepath.Join(filepath.Dir(sumsPath), "PENDING")
	note, perr := os.ReadFile(pending)
	switch {
	case perr == nil && !stale:
		t.Errorf("%s says the outputs predate their sources, but they match: delete it", pending)
	case perr == nil:
		first, _, _ := strings.Cut(string(note), "\n")
		t.Skipf("skip: the outputs predate their sources, as %s says: %s", pending, first)
	case stale:
		for _, d := range diffs {
			t.Error(d)
		}
		t.Errorf("the outputs %v are stale: run `%s and commit p4src/build", outputs, remake)
	}
}

func TestParseSums(t *testing.T) {
	good := strings.Repeat("ab", 32) + "  p4src/shared/x.p4\n\n"
	m, err := parseSums("good", []byte(good))
	if err != nil || m["p4src/shared/x.p4"] != strings.Repeat("ab", 32) {
		t.Errorf("parseSums(good) = %v, %v", m, err)
	}
	for _, bad := range []string{"abc  p4src/x.p4", strings.Repeat("zz", 32) + "  x", "no separator"} {
		if _, err := parseSums("bad", []byte(bad)); err == nil {
			t.Errorf("parseSums(%q) accepted", bad)
		}
	}
}

var defineRE = regexp.MustCompile(`(?m)^#define\s+([A-Z0-9_]+)\s+(0x[0-9A-Fa-f]+|[0-9]+)\b`)

// TestDefinesMatchContract: the sizes and codes in p4src/shared/defines.p4
// equal pkg/pipeline's and pkg/wire's (no p4c needed).
func TestDefinesMatchContract(t *testing.T) {
	path := filepath.Join(repoRoot, "p4src", "shared", "defines.p4")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read defines: %v", err)
	}
	defs := map[string]uint64{}
	for _, m := range defineRE.FindAllStringSubmatch(string(b), -1) {
		v, err := strconv.ParseUint(m[2], 0, 64)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, m[1], err)
		}
		defs[m[1]] = v
	}
	s := Schema()
	size := func(table string) uint64 {
		tb, ok := s.Table(table)
		if !ok {
			t.Fatalf("no table %s", table)
		}
		return uint64(tb.Size)
	}
	want := map[string]uint64{
		"MAX_REGIONS":          MaxRegions,
		"MAX_SERVERS":          MaxServers,
		"REGION_INDEX_MASK":    MaxRegions - 1,
		"SERVER_INDEX_MASK":    MaxServers - 1,
		"NUM_EVENTS":           NumEvents,
		"CANDIDATES":           Candidates,
		"CANDIDATE_GROUP_MASK": 0xFFFF &^ (Candidates - 1),
		"CLIENT_SITE_SIZE":     size(TableClientSite),
		"SLA_FEASIBILITY_SIZE": size(TableSLAFeasibility),
		"CARBON_RANK_SIZE":     size(TableCarbonRank),
		"EXEC_CLASS_SIZE":      size(TableExecClassCost),
		"L3_FORWARD_SIZE":      size(TableL3Forward),
		"L2_FORWARD_SIZE":      size(TableL2Forward),
		"SERVER_ENDPOINT_SIZE": size(TableServerEndpoint),
		"REPLY_SOURCE_SIZE":    size(TableReplySource),
		"SLOT_CELLS":           SlotCells,
		"CREDIT_TTL_TICKS":     CreditTTLTicks,
		"MAX_CREDIT_TICK":      MaxCreditTick,
		"LATENCY_PROBE_CELLS":  SizeLatencyProbe,
		"PROBE_SITE_MASK":      1<<ProbeSiteBits - 1,
		"PROBE_WAY_MASK":       ProbeWays - 1,
		"PROBE_TIMEOUT":        ProbeTimeout,
		"UNBOUNDED":            Unbounded,
		"P4CTL_UDP_PORT":       wire.UDPPort,
		"P4CTL_VERSION":        wire.Version,
		"P4CTL_HEADER_BYTES":   wire.HeaderLen,
		"P4CTL_MIN_UDP_LENGTH": 8 + wire.HeaderLen,
		"MSG_REQUEST":          uint64(wire.MsgRequest),
		"MSG_REPLY":            uint64(wire.MsgReply),
		"MSG_NACK":             uint64(wire.MsgNack),
		"NO_SERVER":            wire.NoServer,
		"FLAG_FALLBACK":        uint64(wire.FlagFallback),
		"FLAG_SPILLED":         uint64(wire.FlagSpilled),
		"FLAG_HELD":            uint64(wire.FlagHeld),
		"FLAG_FORCED":          uint64(wire.FlagForced),
		"FLAG_LONG_DEFERRED":   uint64(wire.FlagLongDeferred),
		"POLICY_RANDOM":        uint64(PolicyRandom),
		"POLICY_P2C":           uint64(PolicyP2C),
		"POLICY_P2C_WORK":      uint64(PolicyP2CWork),
		"POLICY_JBSQ":          uint64(PolicyJBSQ),
		"POLICY_JIQ":           uint64(PolicyJIQ),
		"ON_FULL_NACK":         uint64(OnFullNack),
		"ON_FULL_FORCE":        uint64(OnFullForce),
		"NEXT_HOP_NONE":        NextHopNone,
		"NEXT_HOP_LOCAL":       NextHopLocal,
		"NEXT_HOP_REMOTE":      NextHopRemote,
	}
	for _, e := range Events() {
		want["EVENT_"+strings.ToUpper(strings.ReplaceAll(e.String(), "-", "_"))] = uint64(e)
	}
	for name, w := range want {
		got, ok := defs[name]
		switch {
		case !ok:
			t.Errorf("%s does not define %s (want %d)", path, name, w)
		case got != w:
			t.Errorf("%s: %s = %d, contract says %d", path, name, got, w)
		}
	}
}

// p4Field is one field of a P4 header: name and width in bits.
type p4Field struct {
	name  string
	width int
}

var (
	typedefRE = regexp.MustCompile(`(?m)^typedef\s+bit<(\d+)>\s+(\w+)\s*;`)
	fieldRE   = regexp.MustCompile(`^\s*(bit<(\d+)>|\w+)\s+(\w+)\s*;`)
)

// headerFields parses the fields of `header <name> { ... }` in src.
func headerFields(src, name string) ([]p4Field, error) {
	typedefs := map[string]int{}
	for _, m := range typedefRE.FindAllStringSubmatch(src, -1) {
		w, _ := strconv.Atoi(m[1])
		typedefs[m[2]] = w
	}
	start := strings.Index(src, "header "+name+" {")
	if start < 0 {
		return nil, fmt.Errorf("header %s not found", name)
	}
	end := strings.Index(src[start:], "}")
	if end < 0 {
		return nil, fmt.Errorf("header %s not closed", name)
	}
	var out []p4Field
	for i, line := range strings.Split(src[start:start+end], "\n")[1:] {
		m := fieldRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		w, ok := 0, true
		if m[2] != "" {
			w, _ = strconv.Atoi(m[2])
		} else if w, ok = typedefs[m[1]]; !ok {
			return nil, fmt.Errorf("header %s line %d: unknown type %s", name, i+2, m[1])
		}
		out = append(out, p4Field{m[3], w})
	}
	return out, nil
}

// TestP4HeaderMatchesWire: p4ctl_h in p4src/shared/headers.p4 lays out the
// same fields at the same bit positions as pkg/wire's codec. Each field is
// set to all ones in a wire.Header; exactly that field's P4 bits must be set.
func TestP4HeaderMatchesWire(t *testing.T) {
	path := filepath.Join(repoRoot, "p4src", "shared", "headers.p4")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read headers: %v", err)
	}
	fields, err := headerFields(string(src), "p4ctl_h")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	set := map[string]func(h *wire.Header){
		"version":    func(h *wire.Header) { h.Version = 0xF },
		"msg_type":   func(h *wire.Header) { h.Type = 0xF },
		"flags":      func(h *wire.Header) { h.Flags = 0xFF },
		"sla_ms":     func(h *wire.Header) { h.SLAms = 0xFFFF },
		"exec_class": func(h *wire.Header) { h.ExecClass = 0xFF },
		"hold_count": func(h *wire.Header) { h.HoldCount = 0xFF },
		"site_id":    func(h *wire.Header) { h.Site = 0xFFFF },
		"region_id":  func(h *wire.Header) { h.Region = 0xFF },
		"reserved":   func(h *wire.Header) { h.Reserved = 0xFF },
		"server_id":  func(h *wire.Header) { h.Server = 0xFFFF },
		"request_id": func(h *wire.Header) { h.RequestID = 0xFFFFFFFF },
	}
	off := 0
	for _, f := range fields {
		setter, ok := set[f.name]
		if !ok {
			t.Errorf("P4 field %s has no counterpart in wire.Header", f.name)
			off += f.width
			continue
		}
		delete(set, f.name)
		var h wire.Header
		setter(&h)
		b := h.Marshal()
		for bit := 0; bit < wire.HeaderLen*8; bit++ {
			isSet := b[bit/8]&(0x80>>(bit%8)) != 0
			inField := bit >= off && bit < off+f.width
			if isSet != inField {
				t.Errorf("field %s (P4 bits %d..%d): wire bit %d set=%v", f.name, off, off+f.width-1, bit, isSet)
				break
			}
		}
		off += f.width
	}
	if off != wire.HeaderLen*8 {
		t.Errorf("p4ctl_h is %d bits, wire header %d", off, wire.HeaderLen*8)
	}
	for name := range set {
		t.Errorf("wire.Header field %s missing from p4ctl_h", name)
	}
}
