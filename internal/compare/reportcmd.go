package compare

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// RunReport is `lockcompare report`: it reads a report that -json wrote
// and writes it as a markdown page (see writeMarkdown), so that the
// reports in docs/ are made by a command, never by hand. It returns the
// exit status: 0 when the page was written, 1 when the input could not be
// read or the page written, 2 for bad flags.
func RunReport(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockcompare report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		in      = fs.String("in", "", "read the report from `FILE`, as lockcompare -json wrote it (required)")
		out     = fs.String("out", "", "write the markdown page to `FILE` (required)")
		command = fs.String("command", "lockcompare", "the `COMMAND` that made the report, named in the page's first line")
		commit  = fs.String("commit", "unknown", "the `COMMIT` the report was made from, named in the page's first line")
		readme  = fs.String("readme", "", "also write the GUARANTEES table into `FILE` between its <!-- guarantees:begin --> and <!-- guarantees:end --> lines")
	)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lockcompare report -in FILE.json -out FILE.md [-command CMD] [-commit REV] [-readme FILE]\n\nWrites a report that lockcompare -json wrote as a markdown page.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *in == "" || *out == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lockcompare report: want -in and -out, and no arguments")
		fs.Usage()
		return exitUsage
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		fmt.Fprintf(stderr, "lockcompare report: %v\n", err)
		return exitProblems
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		fmt.Fprintf(stderr, "lockcompare report: %s: %v\n", *in, err)
		return exitProblems
	}
	o := Origin{Command: *command, Commit: *commit}
	if *readme != "" {
		if err := writeReadme(*readme, &rep, o); err != nil {
			fmt.Fprintf(stderr, "lockcompare report: -readme %s: %v\n", *readme, err)
			return exitProblems
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintf(stderr, "lockcompare report: %v\n", err)
		return exitProblems
	}
	err = writeMarkdown(f, &rep, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "lockcompare report: write %s: %v\n", *out, err)
		return exitProblems
	}
	return exitOK
}

// writeReadme writes rep's guarantees grid into the file at path, between
// its markers (see spliceGuarantees).
func writeReadme(path string, rep *Report, o Origin) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	spliced, err := spliceGuarantees(string(doc), rep, o)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(spliced), 0o644)
}
