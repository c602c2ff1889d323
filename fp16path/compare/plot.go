package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// plotColors are the line colours per type (in the order of the sweep's types).
var plotColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"}

// PlotSVG draws sweep (KSweep's result: sweep[i] holds one Accuracy per type at K =
// ks[i], every row with the same types in the same order) as an SVG: the relative RMS
// error against K on log-log axes, the fp16 path solid and the q8_1 path dashed, one
// colour per type. It writes nothing but the SVG to w.
func PlotSVG(w io.Writer, sweep [][]Accuracy, title string) error {
	if len(sweep) == 0 || len(sweep[0]) == 0 {
		return fmt.Errorf("compare: nothing to plot")
	}
	nt := len(sweep[0])
	for i, r := range sweep {
		if len(r) != nt {
			return fmt.Errorf("compare: sweep row %d has %d types, row 0 has %d", i, len(r), nt)
		}
		for j := range r {
			if r[j].Type != sweep[0][j].Type {
				return fmt.Errorf("compare: sweep row %d: type %d is %v, row 0 has %v", i, j, r[j].Type, sweep[0][j].Type)
			}
			if !(r[j].FP16 > 0 && r[j].Q8_1 > 0) || math.IsInf(r[j].FP16, 0) || math.IsInf(r[j].Q8_1, 0) {
				return fmt.Errorf("compare: sweep row %d, %v: errors %g and %g cannot be drawn on a log axis", i, r[j].Type, r[j].FP16, r[j].Q8_1)
			}
		}
	}
	const (
		W, H               = 760, 480
		left, right        = 70, 150
		top, bottom        = 40, 50
		pw, ph             = W - left - right, H - top - bottom
		fontFamily         = "font-family=\"sans-serif\""
		gridStyle          = "stroke=\"#ddd\" stroke-width=\"1\""
		axisStyle          = "stroke=\"#000\" stroke-width=\"1\""
		fp16Dash, q8Dash   = "", " stroke-dasharray=\"6,4\""
		markerR            = 2.5
		legendX, legendRow = W - right + 15, 18
	)
	kmin, kmax := math.Inf(1), math.Inf(-1)
	emin, emax := math.Inf(1), math.Inf(-1)
	for _, r := range sweep {
		k := float64(r[0].K)
		kmin, kmax = math.Min(kmin, k), math.Max(kmax, k)
		for _, a := range r {
			emin = math.Min(emin, math.Min(a.FP16, a.Q8_1))
			emax = math.Max(emax, math.Max(a.FP16, a.Q8_1))
		}
	}
	lx0, lx1 := math.Floor(math.Log2(kmin)), math.Ceil(math.Log2(kmax))
	if lx1 == lx0 {
		lx1++
	}
	ly0, ly1 := math.Floor(math.Log10(emin)), math.Ceil(math.Log10(emax))
	if ly1 == ly0 {
		ly1++
	}
	x := func(k int) float64 { return left + float64((math.Log2(float64(k))-lx0)/(lx1-lx0)*pw) }
	y := func(e float64) float64 { return top + float64((ly1-float64(math.Log10(e)))/(ly1-ly0)*ph) }

	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H, W, H)
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"22\" %s font-size=\"15\">%s</text>\n", left, fontFamily, escape(title))
	for e := lx0; e <= lx1; e++ {
		px := left + float64((e-lx0)/(lx1-lx0)*pw)
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" %s/>\n", px, top, px, top+ph, gridStyle)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" %s font-size=\"12\" text-anchor=\"middle\">%d</text>\n", px, top+ph+18, fontFamily, int(math.Exp2(e)))
	}
	for e := ly0; e <= ly1; e++ {
		for m := 1; m < 10; m++ {
			v := float64(math.Log10(float64(m))) + e
			if v > ly1 {
				break
			}
			py := top + float64((ly1-v)/(ly1-ly0)*ph)
			fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" %s/>\n", left, py, left+pw, py, gridStyle)
			if m == 1 {
				fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" %s font-size=\"12\" text-anchor=\"end\">1e%d</text>\n", left-6, py+4, fontFamily, int(e))
			}
		}
	}
	fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" %s/>\n", left, top, pw, ph, axisStyle)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"13\" text-anchor=\"middle\">K (values per row, log scale)</text>\n", left+pw/2, H-12, fontFamily)
	fmt.Fprintf(&b, "<text x=\"16\" y=\"%d\" %s font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">relative RMS error vs fp64</text>\n", top+ph/2, fontFamily, top+ph/2)
	for j := 0; j < nt; j++ {
		col := plotColors[j%len(plotColors)]
		for _, path := range []struct {
			dash string
			v    func(Accuracy) float64
		}{{fp16Dash, func(a Accuracy) float64 { return a.FP16 }}, {q8Dash, func(a Accuracy) float64 { return a.Q8_1 }}} {
			var pts []string
			for _, r := range sweep {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r[j].K), y(path.v(r[j]))))
			}
			fmt.Fprintf(&b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s/>\n", strings.Join(pts, " "), col, path.dash)
			for _, r := range sweep {
				fmt.Fprintf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", x(r[j].K), y(path.v(r[j])), markerR, col)
			}
		}
		ly := top + 10 + j*legendRow
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", legendX, ly, legendX+22, ly, col)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\">%s</text>\n", legendX+28, ly+4, fontFamily, escape(sweep[0][j].Type.String()))
	}
	ly := top + 20 + nt*legendRow
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"1.6\"/>\n", legendX, ly, legendX+22, ly)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\">fp16 path</text>\n", legendX+28, ly+4, fontFamily)
	ly += legendRow
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\" stroke-width=\"1.6\"%s/>\n", legendX, ly, legendX+22, ly, q8Dash)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\">q8_1 MMVQ</text>\n", legendX+28, ly+4, fontFamily)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;").Replace(s)
}
