package lockerr

import "strings"

// Joined is errors.Join on one line: several errors (one per node or
// Sentinel asked, say) whose Error is their messages separated by "; ";
// errors.Is and errors.As look into each.
type Joined []error

// Error returns the errors' messages, separated by "; ".
func (j Joined) Error() string {
	parts := make([]string, len(j))
	for i, err := range j {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (j Joined) Unwrap() []error { return j }
