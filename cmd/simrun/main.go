// Command simrun drives ggsim, the bit-exact simulator of ggml's quantized CUDA matmuls.
//
//	simrun verify [--json] [--no-fp64] [--coverage] [FILE.gguf ...]
//
// verify runs every case of each golden file through the simulator configured for the
// device and ggml commit the file names, compares every output's float32 bits (the bytes,
// for quantize cases) and checks the GPU's output against the fp64 truth within its
// bound. It prints one line per case and last "verify: N/M cases bit-exact". The exit
// status is 0 only if every case passed; an unsupported case or an unreadable file is a
// failure. With no file it verifies the golden samples embedded in the binary.
//
//	simrun explain --device H200 --type q4_K --shape 4096,14336,512 [--experts E,U] [--json] [--svg FILE]
//
// explain says which kernel ggml dispatches the shape to on that device, and why (the
// thresholds), and for mul_mat_q the J search, config row, tiles, stream-K partition and
// fixup order; --svg draws the partition. simrun explain -h lists its flags.
//
//	simrun capture --ggml DIR --out FILE.gguf [--types ...] [--k K] [--n N] [--batches ...] [--moe E:U:T:B1,...]
//
//	simrun sweep verify [--json] [--no-int8-mma] FILE...
//	simrun sweep run --kind mmq|mmqid --seed S --range FROM-TO [--shard i/n] [--no-int8-mma]
//
// sweep verify regenerates every case of a sweep record (oracle/oracletest.Sweep; made on
// a GPU by gpu/ggml TestSweepCUDA) and runs it through the simulator on the device the
// record's header names, comparing the digest of its output bits; it prints every case
// that does not match and counts per type and profile; exit 1 if any case does not
// match (an unsupported case included). sweep run writes the simulator's own record in
// the same format; --shard i/n keeps the cases whose index is i modulo n.
//
// capture (built with -tags cuda, cgo) runs cases through a ggml build loaded at run
// time (its CUDA backend, or --cpu) and writes a golden file that verify reads.
//
// # Conventions (every subcommand; cli.go holds them, adopt them in a new command)
//
//   - `simrun CMD -h` prints on stdout a description, every flag with its valid values
//     (types, devices: generated from quant and sim, not typed by hand), an example and
//     the exit statuses, and exits 0. Give the command a help text and a
//     `cli{name, help, positional}`, and parse with its parse method (or, for a parse
//     function of its own that returns errors, with parseFlags).
//   - Flags may come before, between or after file arguments (parseFlags); "--" ends
//     the flags. A positional argument a command does not take is a usage error.
//   - Results go to stdout, errors to stderr (cli.usage, cli.fail).
//   - Exit status: exitOK 0 all good; exitFail 1 a verdict failed (a mismatch, an output
//     outside its bound, a case not simulated, a sanitizer finding); exitUsage 2 a
//     command-line mistake; exitInput 3 an input file missing or unreadable.
//   - --json on every command prints one JSON object (cli.writeJSON) following
//     docs/json.md: lower-case snake_case keys, numbers as JSON numbers, NaN/Inf as null,
//     bits and digests as hex strings, keys that do not apply left out.
//   - TestConventions (conventions_test.go) checks all of this for every command in its
//     table: add a new command there.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage:
  simrun verify [--json] [--no-fp64] [--coverage] [FILE.gguf ...]
                                                       verify golden files (default: the embedded samples)
  simrun explain --device NAME --type T --shape K,N,M [--experts E,U] [--json] [--svg FILE]
                                                       why ggml runs the kernel it runs
  simrun capture --ggml DIR --out FILE.gguf [--types T,...] [--k K --n N] [--batches 1,2,...] [--moe E:U:T:B1,...]
                                                       run cases on a ggml build (cuda tag) and write a golden file
  simrun sweep verify [--json] [--no-int8-mma] FILE... verify sweep records (made on a GPU by gpu/ggml TestSweepCUDA)
  simrun sweep run --kind mmq|mmqid --seed S --range FROM-TO [--shard i/n] [--no-int8-mma] [--out FILE]
                                                       write the simulator's own sweep record
  simrun sweep digest --kind q8_1|blocks [--type T] [--chunks N] [--shard i/n] [--out PART]
                                                       hash a very large check (every float32 through q8_1, ...)
  simrun digest combine PART...                        join the parts of a sharded digest sweep
  simrun run --type T --shape K,N,M [--seed S] | --gguf FILE --tensor NAME
                                                       a model-like matmul judged against fp64
  simrun check --type T --shape K,N,M [--experts E,U [--ids I,...]]
                                                       sanitizer: write races, shared-memory races and poison, aborts
  simrun trace --type T --shape K,N,M --row R --col C | --golden FILE --case I --row R --col C
                                                       how one output's bits are made, step by step
  simrun fp16 accuracy|cost [...]                      the GP100 fp16 path against q8_1: error and cost
  simrun bench [--ggml DIR] [--threads N] [--reps R] [--only RE] [--json]
                                                       the simulator against ggml's CPU backend
  simrun bounds --study tightness|power|false-alarms  measure the fp64 kernel bound
  simrun devices [--json]                              list the device catalog
  simrun version [--json] [--files]                    the modelled ggml commit, kernel fingerprint, toolkit, Go

simrun COMMAND -h (or simrun help COMMAND) prints the command's description, its flags
with their valid values, and an example. Flags may also follow file arguments.

`+exitStatusHelp+`

`+jsonHelp)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "verify":
		return cmdVerify(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "capture":
		return cmdCapture(args[1:], stdout, stderr)
	case "sweep":
		return cmdSweep(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "fp16":
		return cmdFP16(args[1:], stdout, stderr)
	case "bounds":
		return cmdBounds(args[1:], stdout, stderr)
	case "devices":
		return cmdDevices(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "version":
		return cmdVersion(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "trace":
		return cmdTrace(args[1:], stdout, stderr)
	case "digest":
		return cmdDigest(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return exitOK
		}
		return run(append(args[1:len(args):len(args)], "-h"), stdout, stderr)
	}
	fmt.Fprintf(stderr, "simrun: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}
