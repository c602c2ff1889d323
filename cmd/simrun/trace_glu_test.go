package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// traceGLUJSON is the part of a GLU trace's JSON the tests read.
type traceGLUJSON struct {
	Op    string `json:"op"`
	Value struct {
		Bits string `json:"bits"`
	} `json:"value"`
	MatchFast bool  `json:"match_fast"`
	MatchGPU  *bool `json:"match_gpu"`
	OK        bool  `json:"ok"`
	GLU       *struct {
		GLU   string `json:"glu"`
		Fused bool   `json:"fused"`
		Gate  *struct {
			Value struct {
				Bits string `json:"bits"`
			} `json:"value"`
			MatchFast bool            `json:"match_fast"`
			MMVQ      json.RawMessage `json:"mmvq"`
		} `json:"gate"`
		Up *struct {
			Value struct {
				Bits string `json:"bits"`
			} `json:"value"`
			MatchFast bool `json:"match_fast"`
		} `json:"up"`
		Steps []struct {
			Op    string `json:"op"`
			Value struct {
				Bits string `json:"bits"`
			} `json:"value"`
		} `json:"steps"`
	} `json:"glu"`
}

func runTraceGLUJSON(t *testing.T, args ...string) (int, traceGLUJSON) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"trace", "--json"}, args...)...)
	var r traceGLUJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.GLU == nil || r.GLU.Gate == nil || r.GLU.Up == nil || len(r.GLU.Steps) == 0 {
		t.Fatalf("trace %q: exit %d, not a GLU trace (%v)\n%s\n%s", args, code, err, out, errs)
	}
	return code, r
}

func hexBits(v float32) string { return fmt.Sprintf("0x%08x", math.Float32bits(v)) }

// The golden GLU cases (swiglu and swiglu_oai, fused): the traced bits are the GPU's,
// the last epilogue step is the value, and the text shows the MUFU steps.
func TestTraceGLUGolden(t *testing.T) {
	const f = "../../testdata/golden/ggml-h200-dev-glu.slice.gguf"
	for _, c := range []struct {
		cs, row string
		glu     string
	}{{"0", "7", "swiglu"}, {"1", "200", "swiglu_oai"}} {
		code, r := runTraceGLUJSON(t, "--golden", f, "--case", c.cs, "--row", c.row, "--steps", "0")
		g := r.GLU
		if code != 0 || !r.OK || !r.MatchFast || r.MatchGPU == nil || !*r.MatchGPU || g.GLU != c.glu || !g.Fused ||
			!g.Gate.MatchFast || !g.Up.MatchFast || g.Steps[len(g.Steps)-1].Value.Bits != r.Value.Bits {
			t.Errorf("case %s: exit %d %+v", c.cs, code, r)
		}
	}
	code, out, _ := runCmd(t, "trace", "--golden", f, "--case", "0", "--row", "7", "--steps", "1")
	for _, want := range []string{"GLU fused", "=== gate", "=== up", "=== epilogue: mmvq.cu", "MUFU.EX2(#", "MUFU.RCP(#",
		"up bias 0 [0x00000000]", "GPU (golden): ", "ggsim.MulMatGLU: "} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q: exit %d\n%s", want, code, out)
		}
	}
	if code != 0 || strings.Contains(out, "DIFFERENT") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// Generated GLUs, fused and unfused (by flag and by shape), MUL_MAT and MUL_MAT_ID: the
// traced bits equal ggsim.MulMatGLU's / MulMatIDGLU's computed here, and the gate's and
// up's traced sums equal ggsim.MulMat's of each weight tensor.
func TestTraceGLUGenerated(t *testing.T) {
	dev, _ := sim.Lookup("H200")
	const seed, K, N = 3, 256, 8
	typ := quant.Q4_K
	for _, c := range []struct {
		g        glu.Spec
		fusion   bool
		M        int
		experts  string
		ids      []int32
		row, col int
		fused    bool
		nsteps   int
	}{
		{glu.Spec{Op: glu.SwiGLU}, true, 1, "", nil, 3, 0, true, 8},
		{glu.Spec{Op: glu.GeGLU}, false, 1, "", nil, 5, 0, false, 9},
		{glu.Spec{Op: glu.SwiGLUOAI, Alpha: 1.5, Limit: 0.25}, false, 1, "", nil, 6, 0, false, 12},
		{glu.Spec{Op: glu.SwiGLUOAI, Alpha: 1.5, Limit: 0.25}, true, 1, "", nil, 6, 0, true, 14},
		{glu.Spec{Op: glu.GeGLU}, true, 2, "", nil, 1, 1, false, 9},
		{glu.Spec{Op: glu.SwiGLU}, true, 1, "4,2", []int32{3, 1}, 2, 1, true, 8},
	} {
		args := []string{"--type", typ.String(), "--shape", fmt.Sprintf("%d,%d,%d", K, N, c.M), "--seed", strconv.Itoa(seed),
			"--row", strconv.Itoa(c.row), "--col", strconv.Itoa(c.col), "--glu", string(c.g.Op), "--fusion=" + strconv.FormatBool(c.fusion), "--steps", "1"}
		if c.g.Op == glu.SwiGLUOAI {
			args = append(args, "--alpha", fmt.Sprint(c.g.Alpha), "--limit", fmt.Sprint(c.g.Limit))
		}
		E := 1
		if c.experts != "" {
			E = 4
			args = append(args, "--experts", c.experts, "--ids", "3,1")
		}
		code, r := runTraceGLUJSON(t, args...)
		if code != 0 || !r.OK || !r.MatchFast || r.GLU.Fused != c.fused || len(r.GLU.Steps) != c.nsteps || len(r.GLU.Gate.MMVQ) == 0 {
			t.Errorf("%q: exit %d, fused %v, %d steps: %+v", args, code, r.GLU.Fused, len(r.GLU.Steps), r)
			continue
		}
		gw, err := oracletest.RealisticWeights(typ, K, N*E, seed)
		if err != nil {
			t.Fatal(err)
		}
		uw, err := oracletest.RealisticWeights(typ, K, N*E, seed+1)
		if err != nil {
			t.Fatal(err)
		}
		b := oracletest.RealisticActivations(K, c.M, seed)
		gW, uW := ggsim.Weights{Type: typ, K: K, N: N, Data: gw}, ggsim.Weights{Type: typ, K: K, N: N, Data: uw}
		var res, rg, ru ggsim.Result
		if c.experts != "" {
			gW.E, uW.E = E, E
			res, err = ggsim.MulMatIDGLU(dev, gW, uW, b, 1, 1, c.ids, 2, c.g, c.fusion)
			if err == nil {
				rg, err = ggsim.MulMatID(dev, gW, b, 1, 1, c.ids, 2)
			}
			if err == nil {
				ru, err = ggsim.MulMatID(dev, uW, b, 1, 1, c.ids, 2)
			}
		} else {
			res, err = ggsim.MulMatGLU(dev, gW, uW, b, c.M, c.g, c.fusion)
			if err == nil {
				rg, err = ggsim.MulMat(dev, gW, b, c.M)
			}
			if err == nil {
				ru, err = ggsim.MulMat(dev, uW, b, c.M)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		i := c.col*N + c.row
		if r.Value.Bits != hexBits(res.Out[i]) || r.GLU.Gate.Value.Bits != hexBits(rg.Out[i]) || r.GLU.Up.Value.Bits != hexBits(ru.Out[i]) {
			t.Errorf("%q: traced %s (gate %s, up %s), ggsim %s (gate %s, up %s)", args, r.Value.Bits, r.GLU.Gate.Value.Bits, r.GLU.Up.Value.Bits,
				hexBits(res.Out[i]), hexBits(rg.Out[i]), hexBits(ru.Out[i]))
		}
	}
	code, out, _ := runCmd(t, "trace", "--shape", "256,8,1", "--glu", "geglu", "--fusion=false", "--row", "2", "--steps", "0")
	for _, want := range []string{"GLU not fused: fusion disabled", "=== epilogue: unary.cu", "MUFU.TANH(#", "ffma a = x * a + 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("unfused text lacks %q: exit %d\n%s", want, code, out)
		}
	}
}

func TestTraceGLUUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--glu", "reglu"},
		{"--fusion=false"},
		{"--glu", "swiglu", "--alpha", "2"},
		{"--limit", "2"},
		{"--golden", "../../testdata/golden/ggml-h200-dev-glu.slice.gguf", "--case", "0", "--glu", "swiglu"},
	} {
		if code, _, errs := runCmd(t, append([]string{"trace"}, args...)...); code != 2 || errs == "" {
			t.Errorf("%q: exit %d %q", args, code, errs)
		}
	}
}

// mul_mat_q's scale steps: --steps N gives the first N iterations theirs (text and
// JSON), each ending with the iteration's bits; --steps 0 none.
func TestTraceMMQScaleSteps(t *testing.T) {
	args := []string{"--type", "q2_K", "--shape", "512,128,20", "--row", "3", "--col", "1"}
	type mmqJSON struct {
		OK  bool `json:"ok"`
		MMQ struct {
			ScaleIters int  `json:"scale_iterations"`
			ScaleMatch bool `json:"scale_match"`
			Steps      []struct {
				Out struct {
					Bits string `json:"bits"`
				} `json:"out"`
				Scale []struct {
					Op    string `json:"op"`
					Value *struct {
						Bits string `json:"bits"`
					} `json:"value"`
				} `json:"scale"`
			} `json:"steps"`
		} `json:"mmq"`
	}
	for _, c := range []struct {
		steps string
		want  int
	}{{"1", 1}, {"0", 0}, {"-1", 2}} {
		code, out, errs := runCmd(t, append([]string{"trace", "--json", "--steps", c.steps}, args...)...)
		var r mmqJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.OK || !r.MMQ.ScaleMatch || r.MMQ.ScaleIters != c.want || len(r.MMQ.Steps) < 2 {
			t.Fatalf("--steps %s: exit %d %v %+v\n%s", c.steps, code, err, r, errs)
		}
		for i, s := range r.MMQ.Steps {
			if (len(s.Scale) > 0) != (i < c.want) {
				t.Errorf("--steps %s: iteration %d has %d scale steps", c.steps, i, len(s.Scale))
			}
			if n := len(s.Scale); n > 0 && (s.Scale[n-1].Op != "ffma" || s.Scale[n-1].Value.Bits != s.Out.Bits) {
				t.Errorf("--steps %s: iteration %d's last step %+v, out %s", c.steps, i, s.Scale[n-1], s.Out.Bits)
			}
		}
	}
	code, out, _ := runCmd(t, append([]string{"trace", "--steps", "1"}, args...)...)
	for _, want := range []string{"every scale step in the kernel's order", "i2f  float(C0)", "fsub tmp -= mins", "fneg -dm0.y", "(same bits)"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q: exit %d\n%s", want, code, out)
		}
	}
	// the dp4a path (V100: no int8 MMA): q4_1's half products
	code, out, _ = runCmd(t, "trace", "--device", "V100", "--type", "q4_1", "--shape", "512,128,20", "--row", "3", "--col", "1", "--steps", "1")
	for _, want := range []string{"hmul tmp.x = dm.x*ds.x (half)", "fadd sum += r", "(same bits)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("dp4a text lacks %q: exit %d\n%s", want, code, out)
		}
	}
}
