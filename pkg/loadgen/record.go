package loadgen

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/p4ctl/p4ctl/pkg/regions"
	"github.com/p4ctl/p4ctl/pkg/wire"
)

// Outcome is how a request ended.
type Outcome uint8

// Outcomes.
const (
	Timeout   Outcome = iota // no reply within Config.Timeout
	OK                       // replied by a server
	Nack                     // the switch could not bind it and nacked
	SendError                // the datagram could not be sent
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Nack:
		return "nack"
	case Timeout:
		return "timeout"
	case SendError:
		return "send-error"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// ParseOutcome maps a name back to an Outcome.
func ParseOutcome(s string) (Outcome, error) {
	for o := Timeout; o <= SendError; o++ {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown outcome %q", s)
}

// MarshalText implements encoding.TextMarshaler.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error {
	v, err := ParseOutcome(string(b))
	*o = v
	return err
}

// Record is one request. Site, Region, Server, Flags and Holds are the
// switch's decisions as echoed in the reply (or nack); they are zero (Server
// wire.NoServer) for requests that got no answer.
type Record struct {
	ID        uint32
	Sent      time.Duration // since the start of the run
	SLAms     uint16
	ExecClass uint8
	Outcome   Outcome
	RTT       time.Duration // send to reply (or nack)
	Site      uint16
	Region    uint8
	Server    uint16
	Flags     wire.Flags
	Holds     uint8
	SLAMet    bool // replied (not nacked) within SLAms × SLAScale
	// Timed is set when the reply carried the server's Timing record
	// (`p4ctl serve --timing`): then ServerQueue, ServerExec and ServerDelay
	// are what the server measured (waiting for a worker, executing, and
	// sleeping its --delay for the site) and ServerDrawn the execution
	// time it drew from the exec class (ServerExec − ServerDrawn is the
	// host's timer slack).
	Timed                                             bool
	ServerQueue, ServerExec, ServerDrawn, ServerDelay time.Duration
}

// jsonRecord is Record's JSON form (times in ms).
type jsonRecord struct {
	ID        uint32  `json:"id"`
	SentMs    float64 `json:"sent_ms"`
	SLAms     uint16  `json:"sla_ms"`
	ExecClass uint8   `json:"exec_class"`
	Outcome   Outcome `json:"outcome"`
	RTTms     float64 `json:"rtt_ms"`
	Site      uint16  `json:"site"`
	Region    uint8   `json:"region"`
	Server    uint16  `json:"server"`
	Flags     uint8   `json:"flags"`
	Holds     uint8   `json:"holds"`
	SLAMet    bool    `json:"sla_met"`
	Timed     bool    `json:"timed,omitempty"`
	QueueMs   float64 `json:"server_queue_ms,omitempty"`
	ExecMs    float64 `json:"server_exec_ms,omitempty"`
	DrawnMs   float64 `json:"server_drawn_ms,omitempty"`
	DelayMs   float64 `json:"server_delay_ms,omitempty"`
}

func msOf(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
func durOf(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1e3)) * time.Microsecond
}

// MarshalJSON writes times in milliseconds (µs resolution).
func (r Record) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonRecord{r.ID, msOf(r.Sent), r.SLAms, r.ExecClass, r.Outcome, msOf(r.RTT),
		r.Site, r.Region, r.Server, uint8(r.Flags), r.Holds, r.SLAMet, r.Timed, msOf(r.ServerQueue), msOf(r.ServerExec), msOf(r.ServerDrawn), msOf(r.ServerDelay)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j jsonRecord
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Record{j.ID, durOf(j.SentMs), j.SLAms, j.ExecClass, j.Outcome, durOf(j.RTTms),
		j.Site, j.Region, j.Server, wire.Flags(j.Flags), j.Holds, j.SLAMet, j.Timed, durOf(j.QueueMs), durOf(j.ExecMs), durOf(j.DrawnMs), durOf(j.DelayMs)}
	return nil
}

// RegionName returns the catalog id of region index i ("region7" when
// the catalog has no such index).
func RegionName(i uint8) string {
	if r, ok := regions.RegionAt(regions.Index(i)); ok {
		return r.ID
	}
	return "region" + strconv.Itoa(int(i))
}

// CSVHeader is the header row of WriteCSV.
var csvHeader = []string{"id", "sent_ms", "sla_ms", "exec_class", "outcome", "rtt_ms",
	"site", "region", "region_name", "server", "flags", "holds", "sla_met",
	"server_queue_ms", "server_exec_ms", "server_drawn_ms", "server_delay_ms"}

// WriteCSV writes records as CSV with a header row. Unanswered requests
// have empty rtt, site, region and server cells; replies without the
// server's timing record empty server_*_ms cells.
func WriteCSV(w io.Writer, records []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, r := range records {
		row := []string{strconv.FormatUint(uint64(r.ID), 10), f(msOf(r.Sent)), strconv.Itoa(int(r.SLAms)),
			strconv.Itoa(int(r.ExecClass)), r.Outcome.String(), "", "", "", "", "", r.Flags.String(),
			strconv.Itoa(int(r.Holds)), strconv.FormatBool(r.SLAMet), "", "", "", ""}
		if r.Outcome == OK || r.Outcome == Nack {
			row[5] = f(msOf(r.RTT))
			row[6] = strconv.Itoa(int(r.Site))
			row[7] = strconv.Itoa(int(r.Region))
			row[8] = RegionName(r.Region)
			if r.Server != wire.NoServer && r.Outcome == OK {
				row[9] = strconv.Itoa(int(r.Server))
			}
		}
		if r.Timed {
			row[13], row[14], row[15], row[16] = f(msOf(r.ServerQueue)), f(msOf(r.ServerExec)), f(msOf(r.ServerDrawn)), f(msOf(r.ServerDelay))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// Result is a finished run.
type Result struct {
	Config      Config
	Records     []Record
	Elapsed     time.Duration // the send window actually used
	Unmatched   int           // replies matching no outstanding request (late, duplicate)
	Malformed   int           // datagrams without a valid p4ctl header
	MaxSendLag  time.Duration // worst delay of a send behind its scheduled time
	Interrupted bool          // the context ended before Duration
	Local       string        // the local UDP address used
	StartedAt   time.Time     // wall-clock time of the run's start (Record.Sent is relative to it)
}

// Summary summarises the run (see Summarize).
func (r *Result) Summary() *Summary {
	s := Summarize(r.Records, r.Elapsed, r.Config.SLAScale)
	s.Target = r.Config.Target.String()
	s.StartedAt = r.StartedAt
	s.Local = r.Local
	s.OfferedRate = r.Config.Rate
	s.CV = r.Config.CV
	s.Unmatched = r.Unmatched
	s.Malformed = r.Malformed
	s.MaxSendLagMs = msOf(r.MaxSendLag)
	s.Interrupted = r.Interrupted
	return s
}

// File is the JSON document `p4ctl loadgen --json` writes: the summary and
// every record. Several files (one per client) merge with Merge.
type File struct {
	Summary *Summary `json:"summary"`
	Records []Record `json:"records"`
}

// WriteJSON writes the summary and records.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(File{Summary: r.Summary(), Records: r.Records}); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// ReadFile reads a document written by WriteJSON.
func ReadFile(rd io.Reader) (*File, error) {
	var f File
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("read loadgen json: %w", err)
	}
	return &f, nil
}
