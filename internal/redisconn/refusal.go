package redisconn

import (
	"context"
	"errors"
)

// Refusal is an error a Pool's connection returns in place of one
// command's reply when that command certainly did not run: the pool
// refused to send it, or the server refused it before running it (package
// cluster: CLUSTERDOWN, no master for the slot, redirected too often).
// The connection stays in step, as after an error reply: a Pipeline hands
// a Refusal to that command's caller alone, as its Reply.Err, and the
// engine takes nothing back after it, since nothing was written.
type Refusal struct {
	Err error
}

// Error returns Err's message.
func (r *Refusal) Error() string { return r.Err.Error() }

// Unwrap returns Err, so that errors.Is finds the sentinel it wraps.
func (r *Refusal) Unwrap() error { return r.Err }

// IsRefusal reports whether err is, or wraps, a *Refusal. It walks the
// chain itself rather than through errors.As, whose target escapes: every
// reply passes through here, and a Lock+Unlock would pay an allocation
// per command.
func IsRefusal(err error) bool {
	for err != nil {
		switch e := err.(type) {
		case *Refusal:
			return true
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if IsRefusal(inner) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// AfterWrite returns err without its Refusal mark, for the failure of a
// command sent after another of the same attempt wrote (setnx_expire's
// EXPIRE after its SETNX): the attempt as a whole may have written, so
// its take-back must run. The message and the sentinels err wraps (a
// context's error included) are kept.
func AfterWrite(err error) error {
	var r *Refusal
	if !errors.As(err, &r) {
		return err
	}
	w := &wrote{msg: err.Error(), errs: []error{r.Err}}
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) && !errors.Is(r.Err, c) {
			w.errs = append(w.errs, c)
		}
	}
	return w
}

// wrote is an error of AfterWrite.
type wrote struct {
	msg  string
	errs []error
}

func (w *wrote) Error() string   { return w.msg }
func (w *wrote) Unwrap() []error { return w.errs }
