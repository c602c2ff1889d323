package sim

import (
	"errors"
	"fmt"
	"math"
)

// PoisonWord is the bit pattern every shared-memory word holds before it is first
// written: a signalling NaN as float32 (0x7FBADBAD), so an unwritten word that slips
// through as a float poisons every result it touches.
const PoisonWord uint32 = 0x7FBADBAD

// MaxSharedErrors is the number of problems a SharedMem keeps in detail; later ones are
// only counted.
const MaxSharedErrors = 64

// SharedErrorKind classifies a shared-memory problem.
type SharedErrorKind int

// The shared-memory problems a SharedMem reports.
const (
	ErrUnwritten  SharedErrorKind = iota // read of a word never written
	ErrRaceRAW                           // read of a word another thread wrote since the last Sync
	ErrRaceWAR                           // write of a word another thread read since the last Sync
	ErrRaceWAW                           // write of a word another thread wrote since the last Sync
	ErrOutOfRange                        // word index outside the allocation
)

func (k SharedErrorKind) String() string {
	switch k {
	case ErrUnwritten:
		return "read of unwritten word"
	case ErrRaceRAW:
		return "race: read after another thread's write"
	case ErrRaceWAR:
		return "race: write after another thread's read"
	case ErrRaceWAW:
		return "race: write after another thread's write"
	case ErrOutOfRange:
		return "index out of range"
	}
	return fmt.Sprintf("SharedErrorKind(%d)", int(k))
}

// SharedError is one problem found by a SharedMem: the word, the thread that made the
// offending access, the other thread involved (-1 if none) and the barrier interval
// (number of Sync calls before the access).
type SharedError struct {
	Kind     SharedErrorKind
	Word     int
	Thread   int
	Other    int
	Interval int
}

func (e *SharedError) Error() string {
	s := fmt.Sprintf("sim: shared memory word %d: %s by thread %d", e.Word, e.Kind, e.Thread)
	if e.Other >= 0 {
		s += fmt.Sprintf(" (other thread %d)", e.Other)
	}
	return s + fmt.Sprintf(" in barrier interval %d", e.Interval)
}

// SharedMem is a block's shared memory of 32-bit words with a checker: every word starts
// as PoisonWord, and between two Sync calls (one __syncthreads interval) a word written by
// one thread and read or written by another is a race. Problems are recorded (see Err),
// never panicked on, and the access still happens (an out-of-range load returns
// PoisonWord and an out-of-range store is dropped). Threads are identified by any int
// (e.g. the linear thread index in the block).
//
// With checking off (SetChecking(false)) loads and stores are plain slice accesses; the
// poison still shows in the values.
type SharedMem struct {
	words    []uint32
	check    bool
	written  []bool
	interval int32
	// per-word access record of the current interval (valid when stamp == interval+1)
	wStamp  []int32
	writer  []int32
	rStamp  []int32
	reader  []int32 // first reader in the interval; -2 after a second distinct reader
	errs    []error
	nErrors int
}

// NewSharedMem returns n poisoned words with checking on. It panics if n < 0.
func NewSharedMem(n int) *SharedMem {
	if n < 0 {
		panic("sim: NewSharedMem with negative size")
	}
	s := &SharedMem{
		words:   make([]uint32, n),
		check:   true,
		written: make([]bool, n),
		wStamp:  make([]int32, n),
		writer:  make([]int32, n),
		rStamp:  make([]int32, n),
		reader:  make([]int32, n),
	}
	for i := range s.words {
		s.words[i] = PoisonWord
	}
	return s
}

// Len returns the number of words.
func (s *SharedMem) Len() int { return len(s.words) }

// SetChecking turns the poison/race checker on or off. Turning it on again starts a fresh
// barrier interval with nothing recorded; words stored while checking was off are still
// reported as unwritten when read.
func (s *SharedMem) SetChecking(on bool) {
	if on && !s.check {
		s.Sync()
	}
	s.check = on
}

func (s *SharedMem) report(k SharedErrorKind, word, tid, other int) {
	s.nErrors++
	if len(s.errs) < MaxSharedErrors {
		s.errs = append(s.errs, &SharedError{Kind: k, Word: word, Thread: tid, Other: other, Interval: int(s.interval)})
	}
}

// Load returns word i as thread tid reads it.
func (s *SharedMem) Load(tid, i int) uint32 {
	if i < 0 || i >= len(s.words) {
		s.report(ErrOutOfRange, i, tid, -1)
		return PoisonWord
	}
	if s.check {
		cur := s.interval + 1
		if !s.written[i] {
			s.report(ErrUnwritten, i, tid, -1)
		}
		if s.wStamp[i] == cur && s.writer[i] != int32(tid) {
			s.report(ErrRaceRAW, i, tid, int(s.writer[i]))
		}
		switch {
		case s.rStamp[i] != cur:
			s.rStamp[i] = cur
			s.reader[i] = int32(tid)
		case s.reader[i] >= 0 && s.reader[i] != int32(tid):
			s.reader[i] = -2
		}
	}
	return s.words[i]
}

// Store writes v to word i as thread tid.
func (s *SharedMem) Store(tid, i int, v uint32) {
	if i < 0 || i >= len(s.words) {
		s.report(ErrOutOfRange, i, tid, -1)
		return
	}
	if s.check {
		cur := s.interval + 1
		if s.wStamp[i] == cur && s.writer[i] != int32(tid) {
			s.report(ErrRaceWAW, i, tid, int(s.writer[i]))
		}
		if s.rStamp[i] == cur && s.reader[i] != int32(tid) {
			s.report(ErrRaceWAR, i, tid, int(s.reader[i])) // -2: several readers
		}
		s.wStamp[i] = cur
		s.writer[i] = int32(tid)
		s.written[i] = true
	}
	s.words[i] = v
}

// LoadF32 is Load as a float32.
func (s *SharedMem) LoadF32(tid, i int) float32 { return math.Float32frombits(s.Load(tid, i)) }

// StoreF32 is Store of a float32's bits.
func (s *SharedMem) StoreF32(tid, i int, v float32) { s.Store(tid, i, math.Float32bits(v)) }

// Sync is __syncthreads(): it ends the current barrier interval.
func (s *SharedMem) Sync() {
	s.interval++
	if s.interval == math.MaxInt32-1 { // stamps would wrap: clear them
		s.interval = 0
		clear(s.wStamp)
		clear(s.rStamp)
	}
}

// Errors returns the recorded problems (at most MaxSharedErrors) and the total count.
func (s *SharedMem) Errors() ([]error, int) { return s.errs, s.nErrors }

// Err returns nil if no problem was found, else all recorded problems joined, followed by
// a count of those not recorded.
func (s *SharedMem) Err() error {
	if s.nErrors == 0 {
		return nil
	}
	errs := s.errs
	if s.nErrors > len(errs) {
		errs = append(errs[:len(errs):len(errs)], fmt.Errorf("sim: %d more shared memory problems not shown", s.nErrors-len(errs)))
	}
	return errors.Join(errs...)
}
