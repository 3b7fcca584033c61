// Package eventq is the future-event list of the serverless simulator: a
// binary min-heap of small value events ordered by time, ties broken by
// insertion order so a run is deterministic.
package eventq

// Event is a scheduled occurrence: at time T (ms) something of kind Kind
// happens to object ID (a request, pod or stage, as the kind says).
type Event struct {
	T    float64
	seq  uint64
	Kind uint8
	ID   int32
}

// Queue is a min-heap of events. The zero value is an empty queue.
type Queue struct {
	h   []Event
	seq uint64
}

// Len is the number of pending events.
func (q *Queue) Len() int { return len(q.h) }

// Reset empties the queue, keeping its storage.
func (q *Queue) Reset() { q.h, q.seq = q.h[:0], 0 }

// Push schedules an event.
func (q *Queue) Push(t float64, kind uint8, id int32) {
	q.seq++
	q.h = append(q.h, Event{T: t, seq: q.seq, Kind: kind, ID: id})
	// sift up
	h := q.h
	i := len(h) - 1
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !less(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// Pop removes and returns the earliest event; ok is false when empty.
func (q *Queue) Pop() (ev Event, ok bool) {
	n := len(q.h)
	if n == 0 {
		return Event{}, false
	}
	h := q.h
	ev = h[0]
	last := h[n-1]
	h = h[:n-1]
	q.h = h
	n--
	if n == 0 {
		return ev, true
	}
	// sift down
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && less(&h[r], &h[l]) {
			c = r
		}
		if !less(&h[c], &last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return ev, true
}

func less(a, b *Event) bool {
	if a.T != b.T {
		return a.T < b.T
	}
	return a.seq < b.seq
}
