package streamk

import (
	"fmt"
	"strings"
)

// BlockSegment is a segment together with the block that processes it.
type BlockSegment struct {
	Block int
	Segment
}

// TilePlan is the view of one output tile: which blocks cover which K ranges of it and
// how their partial sums P (each accumulated from 0.0f over its own K range) combine.
type TilePlan struct {
	Tile  TileCoord
	Index int // linear tile index (Params.TileIndex)
	// Segments cover [0, blocks_per_ne00) in ascending k; with stream-K they belong to
	// ascending blocks, and only the last one reaches the tile's end.
	Segments []BlockSegment
	// End is the block whose segment reaches the tile's end (the last of Segments).
	End int
	// Empty: MUL_MAT_ID tile with jt*J >= col_diff; nothing is computed or written.
	Empty bool
	// Fixup is the fixup-kernel block that adds the other segments' partials to dst; nil
	// when the tile is covered by one segment.
	Fixup *Fixup
}

// Tiles returns the plan of every tile, indexed by linear tile index.
func (part Partition) Tiles() []TilePlan {
	tiles := make([]TilePlan, part.NTiles)
	for t := range tiles {
		tiles[t] = TilePlan{Tile: part.Params.Tile(t), Index: t, End: -1}
	}
	for _, b := range part.Blocks {
		for _, s := range b.Segments {
			tp := &tiles[s.TileIndex]
			tp.Segments = append(tp.Segments, BlockSegment{Block: b.Index, Segment: s})
			if s.KB0Stop == part.Params.BlocksPerTile {
				tp.End = b.Index
			}
			if s.Out == Skipped {
				tp.Empty = true
			}
		}
	}
	for i := range part.Fixups {
		f := &part.Fixups[i]
		tiles[f.TileIndex].Fixup = f
	}
	return tiles
}

// TilePlan returns the plan of tile c, or an error if c is outside the partition.
func (part Partition) TilePlan(c TileCoord) (TilePlan, error) {
	p := part.Params
	if c.It < 0 || c.It >= p.NTilesY || c.Jt < 0 || c.Jt >= p.NTilesX ||
		c.Channel < 0 || c.Channel >= p.NChannels || c.Sample < 0 || c.Sample >= p.NSamples {
		return TilePlan{}, fmt.Errorf("streamk: tile %v outside %d x %d tiles, %d channels, %d samples",
			c, p.NTilesY, p.NTilesX, p.NChannels, p.NSamples)
	}
	return part.Tiles()[p.TileIndex(c)], nil
}

// Formula renders the order in which the tile's output is formed, for example
// "dst = P65 + (((0 + P49) + P32) + P16)": P<b> is block b's partial sum over its
// segment, the parenthesised sum is the fixup kernel's float32 accumulation starting
// from 0.0f, and it is added once to the value the end segment stored in dst.
func (tp TilePlan) Formula() string {
	if tp.Empty {
		return "empty tile: dst not written"
	}
	if tp.Fixup == nil {
		return fmt.Sprintf("dst = P%d", tp.End)
	}
	var sb strings.Builder
	sb.WriteString(strings.Repeat("(", len(tp.Fixup.Adds)))
	sb.WriteString("0")
	for _, b := range tp.Fixup.Adds {
		fmt.Fprintf(&sb, " + P%d)", b)
	}
	return fmt.Sprintf("dst = P%d + %s", tp.End, sb.String())
}
