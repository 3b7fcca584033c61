package p4rt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/p4ctl/p4ctl/pkg/inputfile"
)

// Kind names a kind of P4Info object, as used in lookup errors.
type Kind string

// P4Info object kinds.
const (
	KindTable          Kind = "table"
	KindAction         Kind = "action"
	KindCounter        Kind = "counter"
	KindDirectCounter  Kind = "direct counter"
	KindMeter          Kind = "meter"
	KindRegister       Kind = "register"
	KindDigest         Kind = "digest"
	KindPacketMetadata Kind = "controller packet metadata"
	KindMatchField     Kind = "match field"
	KindParam          Kind = "action parameter"
)

// ErrUnknownName is wrapped by every lookup error for a name the P4Info does
// not hold (errors.Is(err, ErrUnknownName)).
var ErrUnknownName = errors.New("unknown name")

// ErrAmbiguousName is wrapped by lookup errors for a short name that is a
// suffix of several fully-qualified names.
var ErrAmbiguousName = errors.New("ambiguous name")

// Index answers name → id and id → name questions about one P4Info. Names
// are accepted fully qualified ("P4ctlIngress.carbon_rank"), as the P4Info
// alias, or as an unambiguous suffix at a dot boundary ("carbon_rank").
// Unknown and ambiguous names are errors: a lookup never returns id 0.
// An Index is immutable and safe for concurrent use.
type Index struct {
	info *p4configv1.P4Info

	tables   names[*p4configv1.Table]
	actions  names[*p4configv1.Action]
	counters names[*p4configv1.Counter]
	directs  names[*p4configv1.DirectCounter]
	meters   names[*p4configv1.Meter]
	regs     names[*p4configv1.Register]
	digests  names[*p4configv1.Digest]
	packets  names[*p4configv1.ControllerPacketMetadata]

	byID            map[uint32]string // every object id → its name
	directByTable   map[uint32]*p4configv1.DirectCounter
	tableActionRefs map[uint32]map[uint32]*p4configv1.ActionRef
}

// names is one namespace of P4Info objects.
type names[T any] struct {
	kind   Kind
	byName map[string]T // full name and alias
	byID   map[uint32]T
	full   []string // sorted full names
}

func newNames[T any](kind Kind) names[T] {
	return names[T]{kind: kind, byName: map[string]T{}, byID: map[uint32]T{}}
}

func (n *names[T]) add(p *p4configv1.Preamble, v T) error {
	if p == nil || p.Id == 0 || p.Name == "" {
		return fmt.Errorf("%s with missing id or name in P4Info", n.kind)
	}
	if _, dup := n.byID[p.Id]; dup {
		return fmt.Errorf("%s id 0x%08x declared twice in P4Info", n.kind, p.Id)
	}
	n.byID[p.Id] = v
	n.byName[p.Name] = v
	if p.Alias != "" && p.Alias != p.Name {
		if _, taken := n.byName[p.Alias]; !taken {
			n.byName[p.Alias] = v
		}
	}
	n.full = append(n.full, p.Name)
	return nil
}

func (n *names[T]) lookup(name string) (T, error) {
	var zero T
	if v, ok := n.byName[name]; ok {
		return v, nil
	}
	name = strings.TrimPrefix(name, ".")
	var hits []string
	for _, f := range n.full {
		if strings.HasSuffix(f, "."+name) {
			hits = append(hits, f)
		}
	}
	switch len(hits) {
	case 1:
		return n.byName[hits[0]], nil
	case 0:
		return zero, fmt.Errorf("%w: no %s %q in the P4Info%s", ErrUnknownName, n.kind, name, n.suggest())
	default:
		return zero, fmt.Errorf("%w: %s %q matches %s; use the full name", ErrAmbiguousName, n.kind, name, strings.Join(hits, ", "))
	}
}

func (n *names[T]) suggest() string {
	if len(n.full) == 0 {
		return fmt.Sprintf(" (it has no %ss)", n.kind)
	}
	const show = 12
	list := n.full
	more := ""
	if len(list) > show {
		list, more = list[:show], fmt.Sprintf(", ... (%d more)", len(n.full)-show)
	}
	return " (known: " + strings.Join(list, ", ") + more + ")"
}

// NewIndex indexes info. It fails on a nil P4Info, on objects without id or
// name and on duplicate ids.
func NewIndex(info *p4configv1.P4Info) (*Index, error) {
	if info == nil {
		return nil, errors.New("nil P4Info")
	}
	x := &Index{
		info:            info,
		tables:          newNames[*p4configv1.Table](KindTable),
		actions:         newNames[*p4configv1.Action](KindAction),
		counters:        newNames[*p4configv1.Counter](KindCounter),
		directs:         newNames[*p4configv1.DirectCounter](KindDirectCounter),
		meters:          newNames[*p4configv1.Meter](KindMeter),
		regs:            newNames[*p4configv1.Register](KindRegister),
		digests:         newNames[*p4configv1.Digest](KindDigest),
		packets:         newNames[*p4configv1.ControllerPacketMetadata](KindPacketMetadata),
		byID:            map[uint32]string{},
		directByTable:   map[uint32]*p4configv1.DirectCounter{},
		tableActionRefs: map[uint32]map[uint32]*p4configv1.ActionRef{},
	}
	var errs []error
	add := func(p *p4configv1.Preamble, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		x.byID[p.Id] = p.Name
	}
	for _, t := range info.Tables {
		add(t.GetPreamble(), x.tables.add(t.GetPreamble(), t))
		refs := map[uint32]*p4configv1.ActionRef{}
		for _, r := range t.ActionRefs {
			refs[r.Id] = r
		}
		x.tableActionRefs[t.GetPreamble().GetId()] = refs
	}
	for _, a := range info.Actions {
		add(a.GetPreamble(), x.actions.add(a.GetPreamble(), a))
	}
	for _, c := range info.Counters {
		add(c.GetPreamble(), x.counters.add(c.GetPreamble(), c))
	}
	for _, c := range info.DirectCounters {
		add(c.GetPreamble(), x.directs.add(c.GetPreamble(), c))
		x.directByTable[c.DirectTableId] = c
	}
	for _, m := range info.Meters {
		add(m.GetPreamble(), x.meters.add(m.GetPreamble(), m))
	}
	for _, r := range info.Registers {
		add(r.GetPreamble(), x.regs.add(r.GetPreamble(), r))
	}
	for _, d := range info.Digests {
		add(d.GetPreamble(), x.digests.add(d.GetPreamble(), d))
	}
	for _, p := range info.ControllerPacketMetadata {
		add(p.GetPreamble(), x.packets.add(p.GetPreamble(), p))
	}
	for _, n := range [][]string{x.tables.full, x.actions.full, x.counters.full, x.directs.full, x.meters.full, x.regs.full, x.digests.full, x.packets.full} {
		sort.Strings(n)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid P4Info: %w", errors.Join(errs...))
	}
	return x, nil
}

// MustIndex is NewIndex for P4Infos known to be valid (tests, generated
// code); it panics on error.
func MustIndex(info *p4configv1.P4Info) *Index {
	x, err := NewIndex(info)
	if err != nil {
		panic(err)
	}
	return x
}

// P4Info returns the indexed P4Info (do not modify it).
func (x *Index) P4Info() *p4configv1.P4Info { return x.info }

// Table returns the named table.
func (x *Index) Table(name string) (*p4configv1.Table, error) { return x.tables.lookup(name) }

// Action returns the named action.
func (x *Index) Action(name string) (*p4configv1.Action, error) { return x.actions.lookup(name) }

// Counter returns the named indirect counter.
func (x *Index) Counter(name string) (*p4configv1.Counter, error) { return x.counters.lookup(name) }

// DirectCounter returns the named direct counter.
func (x *Index) DirectCounter(name string) (*p4configv1.DirectCounter, error) {
	return x.directs.lookup(name)
}

// Meter returns the named indirect meter.
func (x *Index) Meter(name string) (*p4configv1.Meter, error) { return x.meters.lookup(name) }

// Register returns the named register.
func (x *Index) Register(name string) (*p4configv1.Register, error) { return x.regs.lookup(name) }

// Digest returns the named digest.
func (x *Index) Digest(name string) (*p4configv1.Digest, error) { return x.digests.lookup(name) }

// PacketMetadata returns the controller packet metadata header, "packet_in"
// or "packet_out".
func (x *Index) PacketMetadata(name string) (*p4configv1.ControllerPacketMetadata, error) {
	return x.packets.lookup(name)
}

// TableID returns the id of the named table.
func (x *Index) TableID(name string) (uint32, error) {
	t, err := x.Table(name)
	return t.GetPreamble().GetId(), err
}

// ActionID returns the id of the named action.
func (x *Index) ActionID(name string) (uint32, error) {
	a, err := x.Action(name)
	return a.GetPreamble().GetId(), err
}

// CounterID returns the id of the named indirect counter.
func (x *Index) CounterID(name string) (uint32, error) {
	c, err := x.Counter(name)
	return c.GetPreamble().GetId(), err
}

// DirectCounterID returns the id of the named direct counter.
func (x *Index) DirectCounterID(name string) (uint32, error) {
	c, err := x.DirectCounter(name)
	return c.GetPreamble().GetId(), err
}

// RegisterID returns the id of the named register.
func (x *Index) RegisterID(name string) (uint32, error) {
	r, err := x.Register(name)
	return r.GetPreamble().GetId(), err
}

// DigestID returns the id of the named digest.
func (x *Index) DigestID(name string) (uint32, error) {
	d, err := x.Digest(name)
	return d.GetPreamble().GetId(), err
}

// MatchField returns the named match field of table t. Field names are
// matched exactly or as a suffix at a dot boundary ("dst_addr" for
// "hdr.ipv4.dst_addr").
func (x *Index) MatchField(t *p4configv1.Table, name string) (*p4configv1.MatchField, error) {
	var hits []*p4configv1.MatchField
	for _, f := range t.GetMatchFields() {
		if f.Name == name {
			return f, nil
		}
		if strings.HasSuffix(f.Name, "."+name) {
			hits = append(hits, f)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		known := make([]string, 0, len(t.GetMatchFields()))
		for _, f := range t.GetMatchFields() {
			known = append(known, f.Name)
		}
		return nil, fmt.Errorf("%w: table %s has no match field %q (fields: %s)", ErrUnknownName, t.GetPreamble().GetName(), name, strings.Join(known, ", "))
	default:
		return nil, fmt.Errorf("%w: match field %q of table %s is ambiguous", ErrAmbiguousName, name, t.GetPreamble().GetName())
	}
}

// MatchFieldID returns the id of a match field, looked up by table and
// field name.
func (x *Index) MatchFieldID(table, field string) (uint32, error) {
	t, err := x.Table(table)
	if err != nil {
		return 0, err
	}
	f, err := x.MatchField(t, field)
	return f.GetId(), err
}

// Param returns the named parameter of action a.
func (x *Index) Param(a *p4configv1.Action, name string) (*p4configv1.Action_Param, error) {
	for _, p := range a.GetParams() {
		if p.Name == name {
			return p, nil
		}
	}
	known := make([]string, 0, len(a.GetParams()))
	for _, p := range a.GetParams() {
		known = append(known, p.Name)
	}
	return nil, fmt.Errorf("%w: action %s has no parameter %q (params: %s)", ErrUnknownName, a.GetPreamble().GetName(), name, strings.Join(known, ", "))
}

// ParamID returns the id of a parameter, looked up by action and parameter
// name.
func (x *Index) ParamID(action, param string) (uint32, error) {
	a, err := x.Action(action)
	if err != nil {
		return 0, err
	}
	p, err := x.Param(a, param)
	return p.GetId(), err
}

// PacketMetadataID returns the id of field name of the controller header
// header ("packet_in" or "packet_out").
func (x *Index) PacketMetadataID(header, name string) (uint32, error) {
	h, err := x.PacketMetadata(header)
	if err != nil {
		return 0, err
	}
	for _, m := range h.GetMetadata() {
		if m.Name == name {
			return m.Id, nil
		}
	}
	return 0, fmt.Errorf("%w: %s has no metadata field %q", ErrUnknownName, h.GetPreamble().GetName(), name)
}

// Name returns the name of the object with id (all P4Info ids share one
// number space), or "0x%08x" when the id is unknown.
func (x *Index) Name(id uint32) string {
	if n, ok := x.byID[id]; ok {
		return n
	}
	return fmt.Sprintf("0x%08x", id)
}

// TableByID returns the table with id.
func (x *Index) TableByID(id uint32) (*p4configv1.Table, bool) {
	t, ok := x.tables.byID[id]
	return t, ok
}

// ActionByID returns the action with id.
func (x *Index) ActionByID(id uint32) (*p4configv1.Action, bool) {
	a, ok := x.actions.byID[id]
	return a, ok
}

// CounterByID returns the indirect counter with id.
func (x *Index) CounterByID(id uint32) (*p4configv1.Counter, bool) {
	c, ok := x.counters.byID[id]
	return c, ok
}

// RegisterByID returns the register with id.
func (x *Index) RegisterByID(id uint32) (*p4configv1.Register, bool) {
	r, ok := x.regs.byID[id]
	return r, ok
}

// DirectCounterOf returns the direct counter attached to table id, if any.
func (x *Index) DirectCounterOf(tableID uint32) (*p4configv1.DirectCounter, bool) {
	c, ok := x.directByTable[tableID]
	return c, ok
}

// Tables returns the full names of all tables, sorted.
func (x *Index) Tables() []string { return append([]string(nil), x.tables.full...) }

// Counters returns the full names of all indirect counters, sorted.
func (x *Index) Counters() []string { return append([]string(nil), x.counters.full...) }

// Registers returns the full names of all registers, sorted.
func (x *Index) Registers() []string { return append([]string(nil), x.regs.full...) }

// RegisterWidth returns the bit width of register r's cells (0 when its type
// is not a plain bit<W>).
func RegisterWidth(r *p4configv1.Register) int {
	return int(r.GetTypeSpec().GetBitstring().GetBit().GetBitwidth())
}

// actionRef returns how table tableID refers to action actionID.
func (x *Index) actionRef(tableID, actionID uint32) (*p4configv1.ActionRef, bool) {
	r, ok := x.tableActionRefs[tableID][actionID]
	return r, ok
}

// needsPriority reports whether entries of t must carry a priority: the
// table has a ternary, range or optional match field.
func needsPriority(t *p4configv1.Table) bool {
	for _, f := range t.GetMatchFields() {
		switch f.GetMatchType() {
		case p4configv1.MatchField_TERNARY, p4configv1.MatchField_RANGE, p4configv1.MatchField_OPTIONAL:
			return true
		}
	}
	return false
}

// LoadP4Info reads a P4Info file in text (.txt, .pb.txt, .txtpb), JSON
// (.json) or binary (.bin, .pb) protobuf format; other extensions are tried
// as text, then binary.
func LoadP4Info(path string) (*p4configv1.P4Info, error) {
	return LoadP4InfoContext(context.Background(), path)
}

// LoadP4InfoContext is LoadP4Info reading the file under ctx, at most
// inputfile.MaxSize bytes of it.
func LoadP4InfoContext(ctx context.Context, path string) (*p4configv1.P4Info, error) {
	data, err := inputfile.Read(ctx, path, inputfile.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read P4Info: %w", err)
	}
	info, err := ParseP4Info(data, filepath.Ext(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if EmptyP4Info(info) {
		return nil, fmt.Errorf("%s: %w", path, ErrEmptyP4Info)
	}
	return info, nil
}

// ErrEmptyP4Info is LoadP4Info's error for a file that holds no tables,
// actions, counters, meters, registers or externs (an empty file parses as
// an empty P4Info): nothing a switch could run or a client could name.
var ErrEmptyP4Info = errors.New("empty P4Info: no tables, actions, counters, meters, registers or externs (is it the file p4c wrote with --p4runtime-files?)")

// EmptyP4Info reports whether info describes nothing: no tables, actions,
// counters, meters, registers, digests or externs.
func EmptyP4Info(info *p4configv1.P4Info) bool {
	return len(info.GetTables())+len(info.GetActions())+len(info.GetCounters())+len(info.GetDirectCounters())+
		len(info.GetMeters())+len(info.GetDirectMeters())+len(info.GetRegisters())+len(info.GetDigests())+
		len(info.GetExterns())+len(info.GetActionProfiles())+len(info.GetValueSets()) == 0
}

// ParseP4Info decodes a P4Info in the format named by ext (".txt", ".json",
// ".bin", ...; "" tries text, then binary).
func ParseP4Info(data []byte, ext string) (*p4configv1.P4Info, error) {
	info := &p4configv1.P4Info{}
	switch strings.ToLower(ext) {
	case ".json":
		if err := protojson.Unmarshal(data, info); err != nil {
			return nil, fmt.Errorf("parse P4Info JSON: %w", err)
		}
	case ".bin", ".pb":
		if err := proto.Unmarshal(data, info); err != nil {
			return nil, fmt.Errorf("parse binary P4Info: %w", err)
		}
	default:
		terr := prototext.Unmarshal(data, info)
		if terr == nil {
			break
		}
		info.Reset()
		if berr := proto.Unmarshal(data, info); berr != nil || len(info.GetTables())+len(info.GetActions()) == 0 {
			return nil, fmt.Errorf("parse P4Info text: %w", terr)
		}
	}
	return info, nil
}
