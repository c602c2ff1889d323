package mmq

import (
	"testing"

	"github.com/ggsim/ggsim/quant"
)

var iq4Cases = []typeCase{
	{t: quant.IQ4_NL, fix: fixD(false), value: valueDF},
	{t: quant.IQ4_XS, fix: fixD(false), value: valueDF},
}

func TestLoadIQ4(t *testing.T) {
	for _, c := range iq4Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkLoad(t, c) })
	}
}

func TestMulMatBoundIQ4(t *testing.T) {
	for _, c := range iq4Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkMulMatBound(t, c) })
	}
}
