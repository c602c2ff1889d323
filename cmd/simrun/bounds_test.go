package main

import (
	"strings"
	"testing"
)

func TestBounds(t *testing.T) {
	if code, out, _ := runCmd(t, "bounds", "-h"); code != 0 || !strings.Contains(out, "--study S") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"bounds"}, {"bounds", "--study", "bogus"}, {"bounds", "--study", "power", "--k", "100"}, {"bounds", "--types", "q9_9", "--study", "power"}, {"bounds", "--study", "power", "stray"}} {
		if code, _, errOut := runCmd(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
	code, out, errOut := runCmd(t, "bounds", "--study", "false-alarms", "--cases", "40", "--k", "256", "--mmvq-only")
	if code != 0 || !strings.Contains(out, " 0 outside the bound") {
		t.Errorf("false-alarms: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "bounds", "--study", "power", "--types", "q8_0", "--k", "1024", "--cases", "1")
	if code != 0 || !strings.Contains(out, "| drop-block | q8_0 | mmvq | 1/1 |") {
		t.Errorf("power: exit %d\n%s\n%s", code, out, errOut)
	}
}
