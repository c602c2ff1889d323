package streamk

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// wellFormed decodes the whole document with encoding/xml and returns the element names seen.
func wellFormed(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	names := map[string]int{}
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v, want svg in the SVG namespace", e.Name)
			}
			depth++
			names[e.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || names["svg"] != 1 {
		t.Fatalf("unbalanced document (depth %d, %d svg elements)", depth, names["svg"])
	}
	return names
}

func TestWriteSVG(t *testing.T) {
	for _, p := range []Params{
		{NSM: 132, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 2, NChannels: 1, NSamples: 1, BlocksPerTile: 32, BlocksPerIter: 8},
		{NSM: 132, NVIDIA: true, StreamK: true, NTilesX: 119, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 4, BlocksPerIter: 1},
		{NSM: 6, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 2, NSamples: 1, BlocksPerTile: 4, BlocksPerIter: 1, ExpertCols: []int{9, 3}, J: 8},
		{NSM: 3, StreamK: false, NTilesX: 2, NTilesY: 2, NChannels: 1, NSamples: 1, BlocksPerTile: 12, BlocksPerIter: 8},
		{NSM: 3, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 1, NSamples: 1, BlocksPerTile: 12, BlocksPerIter: 8},
	} {
		part, err := Plan(p)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteSVG(&buf, part); err != nil {
			t.Fatal(err)
		}
		names := wellFormed(t, buf.Bytes())
		nseg := 0
		for _, b := range part.Blocks {
			nseg += len(b.Segments)
		}
		if names["rect"] != nseg {
			t.Errorf("%d rects for %d segments", names["rect"], nseg)
		}
		if n := strings.Count(buf.String(), ">fixup block "); n != len(part.Fixups) {
			t.Errorf("%d fixup labels for %d fixups", n, len(part.Fixups))
		}
		// Every fixup label fits in the picture at 7 px per character.
		var w float64
		if _, err := fmt.Sscanf(buf.String(), `<svg xmlns="http://www.w3.org/2000/svg" width="%g"`, &w); err != nil {
			t.Fatal(err)
		}
		for _, tp := range part.Tiles() {
			if tp.Fixup != nil && 898+7*float64(len(fixupLabel(tp))) > w {
				t.Errorf("svg width %g: label %q does not fit", w, fixupLabel(tp))
			}
		}
	}
	big := Partition{NTiles: MaxSVGTiles + 1, Params: Params{BlocksPerTile: 1}}
	if err := WriteSVG(io.Discard, big); err == nil {
		t.Error("WriteSVG accepted too many tiles")
	}
}

func TestString(t *testing.T) {
	part, err := Plan(Params{NSM: 6, NVIDIA: true, StreamK: true, NTilesX: 2, NTilesY: 1, NChannels: 2, NSamples: 1,
		BlocksPerTile: 4, BlocksPerIter: 1, ExpertCols: []int{9, 3}, J: 8})
	if err != nil {
		t.Fatal(err)
	}
	s := part.String()
	for _, want := range []string{
		"stream-K: nsm 6, 1 wave(s), efficiency 66% (< 90%: grid = nsm): grid 6; fixup kernel launched (4 blocks combine partials)",
		"block 4: kbc [10,13) tile 2 (it=0 jt=0 ch=1 s=0) k [2,4) -> dst; tile 3 (it=0 jt=1 ch=1 s=0) k [0,1) -> skipped",
		"fixup block 1: tile 0: dst = P1 + (0 + P0)",
		"fixup block 5: tile 3: empty tile: dst not written (empty tile: reads slots [4], never written, stores nothing)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("String() lacks %q:\n%s", want, s)
		}
	}
}
