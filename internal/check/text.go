package check

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// valueWidth bounds a value in the table; DETAILS gives it whole.
const valueWidth = 64

// writeText prints the report as lockcompare prints its tables: one row
// per finding, then the details of every finding that is not ok, then the
// result.
func writeText(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "CHECK  prefix %q, %d address(es); status: ok, note (outside the claims), unknown (could not be read), HAZARD (breaks a claimed property)\n",
		rep.Prefix, len(rep.Addrs))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "address\thazard\tstatus\tvalue\tbreaks")
	for _, f := range rep.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Addr, f.Hazard, statusText(f.Status), clip(f.Value, valueWidth), breaksText(f.Breaks))
	}
	tw.Flush()
	var details []Finding
	for _, f := range rep.Findings {
		if f.Status != OK {
			details = append(details, f)
		}
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, "\nDETAILS (%d)\n", len(details))
		for _, f := range details {
			fmt.Fprintf(&b, "  %s %s %s\n", f.Addr, f.Hazard, statusText(f.Status))
			fmt.Fprintf(&b, "    value:  %s\n", f.Value)
			if len(f.Breaks) > 0 {
				fmt.Fprintf(&b, "    breaks: %s\n", breaksText(f.Breaks))
			}
			if f.Why != "" {
				fmt.Fprintf(&b, "    why:    %s\n", f.Why)
			}
			if f.Change != "" {
				fmt.Fprintf(&b, "    change: %s\n", f.Change)
			}
		}
	}
	if len(rep.Unreachable) > 0 {
		fmt.Fprintf(&b, "\nUNREACHABLE (%d)\n", len(rep.Unreachable))
		for _, u := range rep.Unreachable {
			fmt.Fprintf(&b, "  %s\n", u)
		}
	}
	fmt.Fprintf(&b, "\nRESULT  %s: exit status %d\n", resultText(rep), rep.Exit)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

// statusText renders a status, a hazard in capitals as the tables mark a
// broken claim.
func statusText(s Status) string {
	if s == Hazard {
		return "HAZARD"
	}
	return string(s)
}

// resultText counts the findings by status.
func resultText(rep *Report) string {
	count := map[Status]int{}
	for _, f := range rep.Findings {
		count[f.Status]++
	}
	return fmt.Sprintf("%d hazard(s), %d unknown, %d note(s), %d ok", count[Hazard], count[Unknown], count[Note], count[OK])
}

// breaksText renders breaks grouped by property set:
// "MutualExclusion: every technique" or
// "NodeFaultTolerant, MutualExclusion: redlock".
func breaksText(breaks []Break) string {
	if len(breaks) == 0 {
		return "-"
	}
	var order []string
	by := map[string][]string{}
	for _, b := range breaks {
		k := strings.Join(b.Properties, ", ")
		if _, seen := by[k]; !seen {
			order = append(order, k)
		}
		by[k] = append(by[k], b.Technique)
	}
	var parts []string
	for _, k := range order {
		techs := strings.Join(by[k], ", ")
		if slices.Equal(by[k], allTechniques()) {
			techs = "every technique"
		}
		parts = append(parts, k+": "+techs)
	}
	return strings.Join(parts, "; ")
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
