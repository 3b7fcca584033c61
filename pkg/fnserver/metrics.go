package fnserver

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a server's Prometheus metrics (namespace p4ctl_serve). A nil
// *Metrics records nothing.
type Metrics struct {
	requests   *prometheus.CounterVec
	replies    prometheus.Counter
	badHeader  prometheus.Counter
	notRequest prometheus.Counter
	drops      prometheus.Counter
	inflight   prometheus.Gauge
	exec       *prometheus.HistogramVec
	total      *prometheus.HistogramVec
}

// NewMetrics registers the metrics of server id on reg.
func NewMetrics(reg prometheus.Registerer, id uint16) (*Metrics, error) {
	labels := prometheus.Labels{"server": strconv.Itoa(int(id))}
	buckets := prometheus.ExponentialBuckets(0.0001, 2, 20) // 100 µs .. ~52 s
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "p4ctl_serve", Name: "requests_total",
			Help: "Requests accepted, by exec class.", ConstLabels: labels}, []string{"exec_class"}),
		replies: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "p4ctl_serve", Name: "replies_total",
			Help: "Replies sent.", ConstLabels: labels}),
		badHeader: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "p4ctl_serve", Name: "malformed_total",
			Help: "Datagrams without a valid p4ctl header.", ConstLabels: labels}),
		notRequest: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "p4ctl_serve", Name: "unexpected_total",
			Help: "Valid p4ctl datagrams that are not requests.", ConstLabels: labels}),
		drops: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "p4ctl_serve", Name: "dropped_total",
			Help: "Requests dropped (queue full or send failure).", ConstLabels: labels}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "p4ctl_serve", Name: "in_flight",
			Help: "Requests executing or waiting for a worker.", ConstLabels: labels}),
		exec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "p4ctl_serve", Name: "exec_seconds",
			Help: "Execution time, by exec class.", ConstLabels: labels, Buckets: buckets}, []string{"exec_class"}),
		total: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "p4ctl_serve", Name: "service_seconds",
			Help: "Time from receipt to reply (queueing, execution, emulated delay), by exec class.", ConstLabels: labels, Buckets: buckets}, []string{"exec_class"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.replies, m.badHeader, m.notRequest, m.drops, m.inflight, m.exec, m.total} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register serve metrics: %w", err)
		}
	}
	return m, nil
}

func (m *Metrics) start(class uint8) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(strconv.Itoa(int(class))).Inc()
	m.inflight.Inc()
}

func (m *Metrics) done(class uint8, exec, total time.Duration, replied bool) {
	if m == nil {
		return
	}
	c := strconv.Itoa(int(class))
	m.inflight.Dec()
	m.exec.WithLabelValues(c).Observe(exec.Seconds())
	m.total.WithLabelValues(c).Observe(total.Seconds())
	if replied {
		m.replies.Inc()
	}
}

func (m *Metrics) malformed() {
	if m != nil {
		m.badHeader.Inc()
	}
}

func (m *Metrics) unexpected() {
	if m != nil {
		m.notRequest.Inc()
	}
}

func (m *Metrics) dropped() {
	if m != nil {
		m.drops.Inc()
	}
}
