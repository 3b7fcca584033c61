package eventq

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestQueueOrdersByTimeThenInsertion(t *testing.T) {
	var q Queue
	r := rand.New(rand.NewPCG(1, 2))
	type rec struct {
		t   float64
		ins int
	}
	var want []rec
	for i := range 2000 {
		tt := float64(r.IntN(300)) // many ties
		q.Push(tt, uint8(i%3), int32(i))
		want = append(want, rec{tt, i})
	}
	sort.SliceStable(want, func(a, b int) bool { return want[a].t < want[b].t })
	for i, w := range want {
		ev, ok := q.Pop()
		if !ok {
			t.Fatalf("queue empty after %d pops", i)
		}
		if ev.T != w.t || int(ev.ID) != w.ins || ev.Kind != uint8(w.ins%3) {
			t.Fatalf("pop %d = (%g, id %d), want (%g, id %d)", i, ev.T, ev.ID, w.t, w.ins)
		}
	}
	if _, ok := q.Pop(); ok || q.Len() != 0 {
		t.Fatal("queue not empty at the end")
	}
}

func TestQueueInterleavedPushPop(t *testing.T) {
	var q Queue
	r := rand.New(rand.NewPCG(3, 4))
	now := 0.0
	for i := range 10000 {
		if q.Len() == 0 || r.IntN(3) > 0 {
			q.Push(now+r.ExpFloat64(), 0, int32(i))
			continue
		}
		ev, _ := q.Pop()
		if ev.T < now {
			t.Fatalf("time went backwards: %g < %g", ev.T, now)
		}
		now = ev.T
	}
	q.Reset()
	if q.Len() != 0 {
		t.Fatal("Reset left events")
	}
}

func BenchmarkPushPop(b *testing.B) {
	var q Queue
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 512 {
		q.Push(r.Float64(), 0, int32(i))
	}
	b.ResetTimer()
	for range b.N {
		ev, _ := q.Pop()
		q.Push(ev.T+r.Float64(), 0, ev.ID)
	}
}
