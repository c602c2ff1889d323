package streamk

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// String renders the partition as text: the launch decision, then one line per block
// with data (its tile and k range per segment and where the result goes), then the
// fixup work with the order of its additions.
func (part Partition) String() string {
	var sb strings.Builder
	p := part.Params
	fmt.Fprintf(&sb, "%d tiles (nty %d x ntx %d x channels %d x samples %d), %d k-blocks per tile, %d per iteration\n",
		part.NTiles, p.NTilesY, p.NTilesX, p.NChannels, p.NSamples, p.BlocksPerTile, p.BlocksPerIter)
	if !part.StreamK {
		fmt.Fprintf(&sb, "conventional grid (%d, %d, %d): one block per tile, full K, no fixup\n",
			part.GridDim[0], part.GridDim[1], part.GridDim[2])
	} else {
		rule := "< 90%: grid = nsm"
		switch {
		case !p.NVIDIA:
			rule = "not NVIDIA: grid = nsm"
		case part.EfficiencyPercent >= 90:
			rule = ">= 90%: grid = ntiles"
		}
		fixup := "no fixup"
		if part.FixupNeeded {
			fixup = fmt.Sprintf("fixup kernel launched (%d blocks combine partials)", len(part.Fixups))
		}
		fmt.Fprintf(&sb, "stream-K: nsm %d, %d wave(s), efficiency %d%% (%s): grid %d; %s\n",
			p.NSM, part.Waves, part.EfficiencyPercent, rule, part.Grid, fixup)
	}
	idle := 0
	for _, b := range part.Blocks {
		if len(b.Segments) == 0 {
			idle++
			continue
		}
		fmt.Fprintf(&sb, "block %d:", b.Index)
		if part.StreamK {
			fmt.Fprintf(&sb, " kbc [%d,%d)", b.KBC, b.KBCStop)
		}
		for i, s := range b.Segments {
			if i > 0 {
				sb.WriteString(";")
			}
			fmt.Fprintf(&sb, " tile %d (%v) k [%d,%d) -> %v", s.TileIndex, s.Tile, s.KB0Start, s.KB0Stop, s.Out)
		}
		sb.WriteString("\n")
	}
	if idle > 0 {
		fmt.Fprintf(&sb, "%d block(s) without data\n", idle)
	}
	tiles := part.Tiles()
	for _, f := range part.Fixups {
		fmt.Fprintf(&sb, "fixup block %d: tile %d: %s", f.Block, f.TileIndex, tiles[f.TileIndex].Formula())
		if !f.Writes {
			fmt.Fprintf(&sb, " (empty tile: reads slots %v, never written, stores nothing)", f.Stale)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// MaxSVGTiles bounds the number of tile rows WriteSVG draws.
const MaxSVGTiles = 4096

// WriteSVG draws the partition as an SVG image: one row per tile (linear tile order),
// k along x in weight blocks, one rectangle per segment coloured by its block and
// labelled with the block index; right of a split tile's row, the fixup block and the
// order of additions (TilePlan.Formula). End segments (written to dst) have a solid outline,
// fixup segments a dashed red outline, skipped (empty MUL_MAT_ID) tiles are grey. It
// returns an error for partitions with more than MaxSVGTiles tiles and write errors.
func WriteSVG(w io.Writer, part Partition) error {
	if part.NTiles > MaxSVGTiles {
		return fmt.Errorf("streamk: WriteSVG: %d tiles, at most %d can be drawn", part.NTiles, MaxSVGTiles)
	}
	const (
		left, top, rowH, gap, width = 90.0, 40.0, 24.0, 4.0, 800.0
		charW                       = 7.0 // at least the advance of an 11 px monospace glyph
	)
	bpn := part.Params.BlocksPerTile
	if bpn < 1 {
		return fmt.Errorf("streamk: WriteSVG: partition has BlocksPerTile %d", bpn)
	}
	tiles := part.Tiles()
	// The right margin holds the longest fixup label (TilePlan.Formula grows with the
	// number of blocks a tile is split over).
	right := 320.0
	for _, tp := range tiles {
		if tp.Fixup != nil {
			right = max(right, 16+charW*float64(len(fixupLabel(tp))))
		}
	}
	kw := width / float64(bpn)
	height := top + float64(part.NTiles)*(rowH+gap) + 30
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="monospace" font-size="11">`+"\n",
		left+width+right, height)
	title := fmt.Sprintf("%d tiles x %d k-blocks, grid %d", part.NTiles, bpn, part.Grid)
	if part.StreamK {
		title += fmt.Sprintf(", stream-K, efficiency %d%%", part.EfficiencyPercent)
		if part.FixupNeeded {
			title += ", fixup launched"
		}
	} else {
		title += ", conventional tiling"
	}
	fmt.Fprintf(bw, `<text x="4" y="16">%s</text>`+"\n", escape(title))
	fmt.Fprintf(bw, `<text x="%.1f" y="32">k=0</text><text x="%.1f" y="32" text-anchor="end">k=%d</text>`+"\n",
		left, left+width, bpn)
	for _, tp := range tiles {
		y := top + float64(tp.Index)*(rowH+gap)
		fmt.Fprintf(bw, `<text x="4" y="%.1f">tile %d</text>`+"\n", y+rowH*0.7, tp.Index)
		for _, s := range tp.Segments {
			x := left + float64(s.KB0Start)*kw
			// An end segment's last iteration may reach past bpn; draw only [start, bpn).
			wd := float64(min(s.KB0Stop, bpn)-s.KB0Start) * kw
			fill := fmt.Sprintf("hsl(%d,70%%,70%%)", (s.Block*137)%360)
			stroke := `stroke="black" stroke-width="1.5"`
			switch s.Out {
			case ToFixup:
				stroke = `stroke="red" stroke-width="1.5" stroke-dasharray="4,2"`
			case Skipped:
				fill = "#dddddd"
				stroke = `stroke="gray" stroke-width="1"`
			}
			fmt.Fprintf(bw, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s" %s><title>%s</title></rect>`+"\n",
				x, y, wd, rowH, fill, stroke,
				escape(fmt.Sprintf("block %d, tile %d (%v), k [%d,%d) -> %v", s.Block, tp.Index, s.Tile, s.KB0Start, s.KB0Stop, s.Out)))
			fmt.Fprintf(bw, `<text x="%.2f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x+wd/2, y+rowH*0.7, s.Block)
		}
		if tp.Fixup != nil {
			fmt.Fprintf(bw, `<text x="%.1f" y="%.1f">%s</text>`+"\n", left+width+8, y+rowH*0.7, escape(fixupLabel(tp)))
		}
	}
	fmt.Fprintf(bw, `<text x="4" y="%.1f">solid: end segment to dst; dashed red: partial to fixup slot; grey: skipped empty tile; label: block</text>`+"\n", height-10)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// fixupLabel is the text WriteSVG puts right of a split tile's row.
func fixupLabel(tp TilePlan) string {
	return fmt.Sprintf("fixup block %d: %s", tp.Fixup.Block, tp.Formula())
}

func escape(s string) string {
	var sb strings.Builder
	_ = xml.EscapeText(&sb, []byte(s)) // writing to a strings.Builder cannot fail
	return sb.String()
}
