package sim

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func sharedKinds(s *SharedMem) []SharedErrorKind {
	errs, _ := s.Errors()
	var ks []SharedErrorKind
	for _, e := range errs {
		var se *SharedError
		if errors.As(e, &se) {
			ks = append(ks, se.Kind)
		}
	}
	return ks
}

func TestSharedPoison(t *testing.T) {
	s := NewSharedMem(8)
	if v := s.LoadF32(0, 3); v == v {
		t.Fatalf("unwritten word reads as %g, want NaN poison", v)
	}
	if s.Load(0, 3) != PoisonWord {
		t.Fatal("poison pattern")
	}
	if !math.IsNaN(float64(math.Float32frombits(PoisonWord))) {
		t.Fatal("PoisonWord is not a NaN")
	}
	ks := sharedKinds(s)
	if len(ks) != 2 || ks[0] != ErrUnwritten {
		t.Fatalf("kinds %v, want two ErrUnwritten", ks)
	}
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "word 3") || !strings.Contains(err.Error(), "thread 0") {
		t.Fatalf("Err() = %v", err)
	}
}

func TestSharedNoRace(t *testing.T) {
	// the usual pattern: each thread writes its word, Sync, every thread reads all words
	const n = 64
	s := NewSharedMem(n)
	for tid := 0; tid < n; tid++ {
		s.StoreF32(tid, tid, float32(tid))
	}
	s.Sync()
	for tid := 0; tid < n; tid++ {
		for i := 0; i < n; i++ {
			if s.LoadF32(tid, i) != float32(i) {
				t.Fatal("value")
			}
		}
	}
	s.Sync()
	// same thread may read and rewrite its own word within an interval
	s.Store(5, 5, 1)
	s.Load(5, 5)
	s.Store(5, 5, 2)
	if err := s.Err(); err != nil {
		t.Fatalf("unexpected: %v", err)
	}
}

func TestSharedRaces(t *testing.T) {
	cases := []struct {
		name string
		run  func(s *SharedMem)
		want SharedErrorKind
	}{
		{"RAW", func(s *SharedMem) { s.Store(1, 0, 7); s.Load(2, 0) }, ErrRaceRAW},
		{"WAR", func(s *SharedMem) { s.Store(1, 0, 7); s.Sync(); s.Load(2, 0); s.Store(1, 0, 8) }, ErrRaceWAR},
		{"WAW", func(s *SharedMem) { s.Store(1, 0, 7); s.Store(2, 0, 8) }, ErrRaceWAW},
		{"WAR two readers", func(s *SharedMem) { s.Store(1, 0, 7); s.Sync(); s.Load(1, 0); s.Load(2, 0); s.Store(1, 0, 8) }, ErrRaceWAR},
		{"out of range", func(s *SharedMem) { s.Store(0, 4, 1) }, ErrOutOfRange},
		{"out of range load", func(s *SharedMem) { s.Load(0, -1) }, ErrOutOfRange},
	}
	for _, c := range cases {
		s := NewSharedMem(4)
		c.run(s)
		ks := sharedKinds(s)
		if len(ks) != 1 || ks[0] != c.want {
			t.Errorf("%s: kinds %v, want [%v]", c.name, ks, c.want)
		}
	}
	// the barrier separates: write, Sync, read by another thread is fine
	s := NewSharedMem(4)
	s.Store(1, 2, 7)
	s.Sync()
	s.Load(2, 2)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	// error text names word and both threads
	s = NewSharedMem(4)
	s.Store(3, 1, 7)
	s.Load(9, 1)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "word 1") ||
		!strings.Contains(err.Error(), "thread 9") || !strings.Contains(err.Error(), "other thread 3") {
		t.Fatalf("Err() = %v", err)
	}
}

func TestSharedErrorCap(t *testing.T) {
	s := NewSharedMem(1)
	for i := 0; i < 1000; i++ {
		s.Load(i, 0)
	}
	errs, n := s.Errors()
	if len(errs) != MaxSharedErrors || n != 1000 {
		t.Fatalf("kept %d of %d", len(errs), n)
	}
	if !strings.Contains(s.Err().Error(), "more shared memory problems") {
		t.Fatal("Err does not mention the dropped problems")
	}
}

func TestSharedUnchecked(t *testing.T) {
	s := NewSharedMem(2)
	s.SetChecking(false)
	s.Store(1, 0, 5)
	s.Load(2, 0)
	s.Load(2, 1)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if s.Load(0, 1) != PoisonWord || s.Load(0, 0) != 5 || s.Len() != 2 {
		t.Fatal("values")
	}
	s.SetChecking(true)
	s.Load(3, 0) // written while unchecked: no record of it, reported as unwritten
	if ks := sharedKinds(s); len(ks) != 1 || ks[0] != ErrUnwritten {
		t.Fatalf("kinds %v", ks)
	}
}

func TestCounters(t *testing.T) {
	var nilc *Counters
	nilc.Inc(OpFFMA, 3) // must not panic
	nilc.Add(&Counters{})
	nilc.Reset()
	if nilc.Get(OpFFMA) != 0 || nilc.String() != "<nil>" {
		t.Fatal("nil counters")
	}
	c := &Counters{}
	c.Inc(OpFFMA, 3)
	c.Inc(OpDP4A, 2)
	d := &Counters{}
	d.Inc(OpFFMA, 1)
	c.Add(d)
	if c.Get(OpFFMA) != 4 || c.String() != "FFMA=4 DP4A=2" {
		t.Fatalf("counters %v", c)
	}
	for k := Counter(0); k < NumCounters; k++ {
		if k.String() == "" || strings.HasPrefix(k.String(), "Counter(") {
			t.Errorf("counter %d has no name", int(k))
		}
	}
	c.Reset()
	if c.String() != "" {
		t.Fatal("Reset")
	}
}
