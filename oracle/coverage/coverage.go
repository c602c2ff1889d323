package coverage

import (
	"cmp"
	"fmt"
	"slices"
	"sync"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/streamk"
	"github.com/ggsim/ggsim/tiling"
)

// The kinds of Feature, in report order.
const (
	KindDispatch = "dispatch" // "mul_mat mmq", "mul_mat_id mmvq_moe", ...
	KindMMVQ     = "mmvq"     // "mul_mat_vec_q nwarps=4 rows_per_block=1 small_k"
	KindMMQJ     = "mmq_j"    // "J=64"
	KindMMQTiles = "mmq_tiles"
	KindMMQPath  = "mmq_path"
	KindStreamK  = "stream_k"
	KindMoE      = "moe"
)

var kindOrder = []string{KindDispatch, KindMMVQ, KindMMQJ, KindMMQTiles, KindMMQPath, KindStreamK, KindMoE}

// The values of the fixed-valued kinds.
const (
	TilesFull      = "full (ne01 % 128 == 0)"
	TilesFallback  = "fallback (ne01 % 128 != 0)"
	PathMMA        = "mma"
	PathDP4A       = "dp4a"
	Conventional   = "conventional grid (no stream-K)"
	StreamKNoFixup = "stream-K without fixup"
	StreamKFixup   = "stream-K with fixup"
	MoEInverse     = "mul_mat_q ids, inverse map (B1 = 1, U > 1)"
	MoEForward     = "mul_mat_q ids, forward map"
	MoEEmptyTiles  = "mul_mat_q ids, tiles empty for their expert"
)

// Feature is one kernel path: a kind (KindDispatch, ...) and its value.
type Feature struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

func (f Feature) String() string { return f.Kind + ": " + f.Value }

func compareFeatures(a, b Feature) int {
	if c := cmp.Compare(slices.Index(kindOrder, a.Kind), slices.Index(kindOrder, b.Kind)); c != 0 {
		return c
	}
	if a.Kind == KindMMQJ { // numeric order of J
		var x, y int
		fmt.Sscanf(a.Value, "J=%d", &x)
		fmt.Sscanf(b.Value, "J=%d", &y)
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a.Value, b.Value)
}

// Features returns the paths one launch takes: a MUL_MAT (expertCols nil; s.Experts 0)
// or a MUL_MAT_ID (r its routing, which gives the experts' column counts) of type t on
// dev. A shape the dispatch refuses is an error.
func Features(dev sim.Device, t quant.Type, s tiling.Shape, r *moe.Routing) ([]Feature, error) {
	d, err := tiling.Decide(dev, t, s)
	if err != nil {
		return nil, err
	}
	op := "mul_mat"
	if s.ID() {
		op = "mul_mat_id"
	}
	fs := []Feature{{KindDispatch, op + " " + d.Kernel.String()}}
	switch d.Kernel {
	case tiling.KernelMMVQ, tiling.KernelMMVQMoE:
		if p, err := tiling.MakeMMVQPlan(&dev, t, int(s.K), int(s.M), s.ID()); err == nil {
			fs = append(fs, mmvqFeature(p))
		}
	case tiling.KernelMMQ:
		var cols []int
		if r != nil {
			cols = r.ExpertCols()
		}
		fs = append(fs, mmqFeatures(dev, t, s, cols)...)
		if r != nil {
			if r.Inverse {
				fs = append(fs, Feature{KindMoE, MoEInverse})
			} else {
				fs = append(fs, Feature{KindMoE, MoEForward})
			}
		}
	}
	return fs, nil
}

func mmvqFeature(p *tiling.MMVQPlan) Feature {
	v := fmt.Sprintf("%s nwarps=%d rows_per_block=%d", p.Kernel.GGMLName(), p.NWarps, p.RowsPerBlock)
	if p.SmallK {
		v += " small_k"
	}
	if p.HalveIters {
		v += " halve_iters"
	}
	return Feature{KindMMVQ, v}
}

// mmqFeatures are the mul_mat_q paths of one launch: J, tiles, layout, stream-K (and,
// for MUL_MAT_ID with cols, empty expert tiles).
func mmqFeatures(dev sim.Device, t quant.Type, s tiling.Shape, cols []int) []Feature {
	return mmqFeaturesMemo(dev, t, s, cols, nil)
}

// mmqFeaturesMemo is mmqFeatures with the stream-K part memoised in memo (nil: none);
// the memo is keyed by everything streamk.Plan reads, so it is only for one device.
func mmqFeaturesMemo(dev sim.Device, t quant.Type, s tiling.Shape, cols []int, memo map[string][]Feature) []Feature {
	p, err := tiling.MakeMMQPlan(&dev, t, s)
	if err != nil {
		return nil
	}
	fs := []Feature{{KindMMQJ, fmt.Sprintf("J=%d", p.Config.J)}}
	if p.Config.Fallback {
		fs = append(fs, Feature{KindMMQTiles, TilesFallback})
	} else {
		fs = append(fs, Feature{KindMMQTiles, TilesFull})
	}
	if p.Config.UseMMADataLayout {
		fs = append(fs, Feature{KindMMQPath, PathMMA})
	} else {
		fs = append(fs, Feature{KindMMQPath, PathDP4A})
	}
	params := streamk.Params{
		NSM: dev.SMCount, NVIDIA: sim.CCIsNVIDIA(dev.CC), StreamK: p.Config.StreamK,
		NTilesX: p.NTX, NTilesY: p.NTY, NChannels: p.NTZW, NSamples: 1,
		BlocksPerTile: p.BlocksPerNe00, BlocksPerIter: p.BlocksPerIter,
		ExpertCols: cols, J: p.Config.J,
	}
	if memo == nil {
		return append(fs, streamKFeatures(params)...)
	}
	key := fmt.Sprint(params)
	sk, ok := memo[key]
	if !ok {
		sk = streamKFeatures(params)
		memo[key] = sk
	}
	return append(fs, sk...)
}

// streamKFeatures are the stream-K paths of the partition of params.
func streamKFeatures(params streamk.Params) []Feature {
	cols := params.ExpertCols
	var fs []Feature
	part, err := streamk.Plan(params)
	if err != nil {
		return nil
	}
	switch {
	case !part.StreamK:
		fs = append(fs, Feature{KindStreamK, Conventional})
	case len(part.Fixups) > 0:
		fs = append(fs, Feature{KindStreamK, StreamKFixup})
	default:
		fs = append(fs, Feature{KindStreamK, StreamKNoFixup})
	}
	if cols != nil {
		for _, tp := range part.Tiles() {
			if tp.Empty {
				fs = append(fs, Feature{KindMoE, MoEEmptyTiles})
				break
			}
		}
	}
	return fs
}

// deviceKey identifies a device configuration for the cache of Possible.
func deviceKey(dev sim.Device) string {
	return fmt.Sprintf("%s|%d|%d|%d|%v|%v|%v|%v", dev.Name, dev.CC, dev.SMCount, dev.WarpSize, dev.ArchList, dev.NoTuringMMA, dev.ForceMMQ, dev.SmemPerBlockOptin)
}

var possibleCache sync.Map // deviceKey -> []Feature

// Possible returns every path the modelled dispatch can take on dev, sorted (see the
// package documentation for the grid of shapes it is enumerated over).
func Possible(dev sim.Device) []Feature {
	key := deviceKey(dev)
	if v, ok := possibleCache.Load(key); ok {
		return slices.Clone(v.([]Feature))
	}
	set := map[Feature]bool{}
	memo := map[string][]Feature{}
	var cols []int64
	for m := int64(1); m <= 260; m++ {
		cols = append(cols, m)
	}
	cols = append(cols, 512, 1024)
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if !t.Valid() || !tiling.SupportsMulMat(t) {
			continue
		}
		qk := int64(t.BlockSize())
		Ks := []int64{qk, 2 * qk, 4 * qk, 8 * qk, 16 * qk, 32 * qk, 64 * qk, 256 * qk}
		for _, m := range cols {
			for _, n := range []int64{4096, 4000} {
				for _, k := range Ks {
					for _, e := range []int64{0, 8, 128} {
						s := tiling.Shape{K: k, N: n, M: m, Experts: e}
						d, err := tiling.Decide(dev, t, s)
						if err != nil {
							continue
						}
						op := "mul_mat"
						if e > 0 {
							op = "mul_mat_id"
						}
						set[Feature{KindDispatch, op + " " + d.Kernel.String()}] = true
						switch d.Kernel {
						case tiling.KernelMMVQ, tiling.KernelMMVQMoE:
							if p, err := tiling.MakeMMVQPlan(&dev, t, int(k), int(m), e > 0); err == nil {
								set[mmvqFeature(p)] = true
							}
						case tiling.KernelMMQ:
							// The MMQ paths depend on K only through the blocks per tile
							// (two values, one and 256 blocks, reach both stream-K cases),
							// on the columns through J (at most 128), and on the experts
							// through the tile count: a smaller grid suffices.
							if (k != Ks[0] && k != Ks[len(Ks)-1]) || m > 260 || e > 8 {
								continue
							}
							var ec []int
							if e > 0 {
								// Empty expert tiles: every token to expert 0.
								ec = make([]int, e)
								ec[0] = int(m)
								set[Feature{KindMoE, MoEForward}] = true
								set[Feature{KindMoE, MoEInverse}] = true
							}
							for _, f := range mmqFeaturesMemo(dev, t, s, ec, memo) {
								set[f] = true
							}
						}
					}
				}
			}
		}
	}
	fs := make([]Feature, 0, len(set))
	for f := range set {
		fs = append(fs, f)
	}
	slices.SortFunc(fs, compareFeatures)
	possibleCache.Store(key, fs)
	return slices.Clone(fs)
}

// DeviceReport is the coverage of the cases of one device.
type DeviceReport struct {
	Device string `json:"device"`
	// Cases counts the launches recorded on the device.
	Cases int `json:"cases"`
	// Exercised lists the features the cases took, with how many cases took each.
	Exercised []Count `json:"exercised"`
	// Missed lists the features the device can take (Possible) that no case took.
	Missed []Feature `json:"missed"`
	// Possible is len(Possible(device)).
	Possible int `json:"possible"`
	// Covered is the number of Possible features exercised.
	Covered int `json:"covered"`
}

// Count is a feature and the number of cases that took it.
type Count struct {
	Feature
	Cases int `json:"cases"`
}

// Recorder is an oracle.Impl that records the kernel paths of every launch it passes
// to the implementation it wraps. It is safe for concurrent use.
type Recorder struct {
	Impl oracle.Impl

	mu      sync.Mutex
	devs    []sim.Device
	counts  map[string]map[Feature]int // deviceKey -> feature -> cases
	cases   map[string]int
	errored int
}

// NewRecorder wraps impl.
func NewRecorder(impl oracle.Impl) *Recorder {
	return &Recorder{Impl: impl, counts: map[string]map[Feature]int{}, cases: map[string]int{}}
}

// Name is the wrapped implementation's.
func (r *Recorder) Name() string { return r.Impl.Name() }

// MulMat records the launch's paths and runs it on the wrapped implementation.
func (r *Recorder) MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error) {
	r.Record(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}, nil)
	return r.Impl.MulMat(dev, t, a, K, N, b, M)
}

// MulMatID records the launch's paths (with its routing) and runs it on the wrapped
// implementation.
func (r *Recorder) MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error) {
	rt, err := moe.Route(ids, T, U, E, B1)
	if err == nil {
		r.Record(dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)}, rt)
	}
	return r.Impl.MulMatID(dev, t, as, K, N, E, b, B1, T, ids, U)
}

// Locate forwards to the wrapped implementation if it is an oracle.Localizer.
func (r *Recorder) Locate(dev sim.Device, t quant.Type, K, N, M int, index int) string {
	if l, ok := r.Impl.(oracle.Localizer); ok {
		return l.Locate(dev, t, K, N, M, index)
	}
	return ""
}

// Record adds one launch (rt nil for MUL_MAT). A shape the dispatch refuses is not
// recorded.
func (r *Recorder) Record(dev sim.Device, t quant.Type, s tiling.Shape, rt *moe.Routing) {
	fs, err := Features(dev, t, s, rt)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errored++
		return
	}
	key := deviceKey(dev)
	m := r.counts[key]
	if m == nil {
		m = map[Feature]int{}
		r.counts[key] = m
		r.devs = append(r.devs, dev)
	}
	r.cases[key]++
	for _, f := range fs {
		m[f]++
	}
}

// Report returns the coverage per device, in the order the devices were first seen.
func (r *Recorder) Report() []DeviceReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []DeviceReport
	for _, dev := range r.devs {
		key := deviceKey(dev)
		m := r.counts[key]
		rep := DeviceReport{Device: dev.Name, Cases: r.cases[key]}
		for f, n := range m {
			rep.Exercised = append(rep.Exercised, Count{f, n})
		}
		slices.SortFunc(rep.Exercised, func(a, b Count) int { return compareFeatures(a.Feature, b.Feature) })
		poss := Possible(dev)
		rep.Possible = len(poss)
		for _, f := range poss {
			if m[f] > 0 {
				rep.Covered++
			} else {
				rep.Missed = append(rep.Missed, f)
			}
		}
		out = append(out, rep)
	}
	return out
}
