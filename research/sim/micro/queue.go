package micro

// ring is a growable FIFO. Its capacity only grows, so a simulation that has
// reached its steady-state sizes no longer allocates.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring[T]) peek() *T { return &r.buf[r.head] }

func (r *ring[T]) grow() {
	size := max(16, 2*len(r.buf))
	nb := make([]T, size)
	for i := 0; i < r.n; i++ {
		nb[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = nb, 0
}

// event is one scheduled simulation event. Events are ordered by time, then
// by the sequence number given when scheduled, so equal-time events run in
// the order they were scheduled and a run is deterministic.
type event struct {
	t    float64
	seq  uint64
	a, b int32
	ver  uint32
	kind evKind
}

func (e *event) before(o *event) bool {
	return e.t < o.t || (e.t == o.t && e.seq < o.seq)
}

// eventHeap is a typed binary min-heap (no interface boxing).
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q[i].before(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q) {
			break
		}
		m := l
		if r := l + 1; r < len(q) && q[r].before(&q[l]) {
			m = r
		}
		if !q[m].before(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// idxSet is a set of small integers with O(1) add, remove and membership.
type idxSet struct {
	pos   []int32 // position in items, −1 when absent
	items []int32
}

func newIdxSet(n int) idxSet {
	s := idxSet{pos: make([]int32, n), items: make([]int32, 0, n)}
	for i := range s.pos {
		s.pos[i] = -1
	}
	return s
}

func (s *idxSet) add(i int32) {
	if s.pos[i] >= 0 {
		return
	}
	s.pos[i] = int32(len(s.items))
	s.items = append(s.items, i)
}

func (s *idxSet) remove(i int32) {
	p := s.pos[i]
	if p < 0 {
		return
	}
	last := s.items[len(s.items)-1]
	s.items[p] = last
	s.pos[last] = p
	s.items = s.items[:len(s.items)-1]
	s.pos[i] = -1
}
