package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
)

type fileReport struct {
	File  string              `json:"file"`
	Error string              `json:"error,omitempty"`
	Cases []oracle.CaseResult `json:"cases,omitempty"`
}

type verifyReport struct {
	Files    []fileReport `json:"files"`
	Passed   int          `json:"passed"`
	Total    int          `json:"total"`
	BitExact int          `json:"bit_exact"`
	OK       bool         `json:"ok"`
}

func cmdVerify(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("verify", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print the report as JSON")
	noFP64 := fl.Bool("no-fp64", false, "skip the fp64 part of the verdict")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	type source struct {
		name string
		open func() (*golden.File, error)
	}
	var srcs []source
	if fl.NArg() == 0 {
		names := ggsim.SampleFiles()
		if len(names) == 0 {
			fmt.Fprintln(stderr, "simrun: no embedded golden samples")
			return 1
		}
		for _, n := range names {
			n := n
			srcs = append(srcs, source{"embedded:" + n, func() (*golden.File, error) {
				data, err := ggsim.Samples.ReadFile(n)
				if err != nil {
					return nil, err
				}
				return golden.New(bytes.NewReader(data), int64(len(data)), "embedded:"+n)
			}})
		}
	} else {
		for _, p := range fl.Args() {
			p := p
			srcs = append(srcs, source{p, func() (*golden.File, error) { return golden.Open(p) }})
		}
	}

	impl := ggsim.NewSimulator() // the front door, judged by the oracle
	rep := verifyReport{OK: true}
	for _, s := range srcs {
		fr := fileReport{File: s.name}
		f, err := s.open()
		if err != nil {
			fr.Error = err.Error()
			rep.OK = false
			rep.Files = append(rep.Files, fr)
			if !*asJSON {
				fmt.Fprintf(stdout, "%s: ERROR: %v\n", s.name, err)
			}
			continue
		}
		res, err := oracle.VerifyFile(f, impl, oracle.Options{SkipFP64: *noFP64})
		f.Close()
		if err != nil {
			fr.Error = err.Error()
			rep.OK = false
		}
		fr.Cases = res
		for i := range res {
			rep.Total++
			if res[i].Status == oracle.StatusBitExact {
				rep.BitExact++
			}
			if res[i].OK() {
				rep.Passed++
			} else {
				rep.OK = false
			}
			if !*asJSON {
				fmt.Fprintln(stdout, res[i].Line())
			}
		}
		rep.Files = append(rep.Files, fr)
	}
	if rep.Total == 0 {
		rep.OK = false
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "simrun:", err)
			return 1
		}
	} else {
		if rep.BitExact != rep.Passed {
			fmt.Fprintf(stdout, "(%d bit-exact cases fell outside their fp64 bound)\n", rep.BitExact-rep.Passed)
		}
		fmt.Fprintf(stdout, "verify: %d/%d cases bit-exact\n", rep.BitExact, rep.Total)
	}
	if !rep.OK {
		return 1
	}
	return 0
}
