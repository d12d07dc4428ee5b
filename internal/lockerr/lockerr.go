// Package lockerr is the one place that writes the "lockzoo: <technique>:"
// prefix of an error a caller gets. The layer that faces the caller (the
// engine's Locker and Lease, a technique's New and Close, package fencing)
// wraps its error in an *Error; the layers below return theirs without
// the prefix. Sentinels keep "lockzoo: " in their own text, and Lua
// scripts keep it in their "ERR lockzoo: ..." replies, so that Redis's
// logs name lockzoo; an *Error drops both when it renders.
package lockerr

import (
	"strconv"
	"strings"
)

// prefix starts every message an *Error renders, once.
const prefix = "lockzoo: "

// Error is an error returned to a caller: which technique, which call and
// key (Op, Key; empty when the error is not about one call, as in New),
// and the cause Err. Unwrap returns Err, so errors.Is and errors.As still
// match every sentinel in the chain.
type Error struct {
	Technique string // e.g. "lua_release"
	Op        string // e.g. "lock", "unlock"; "" for none
	Key       string // the caller's key; rendered only with Op
	Err       error
}

// New returns an *Error for technique that is not about one call.
func New(technique string, err error) error {
	return &Error{Technique: technique, Err: err}
}

// Op returns an *Error for the call op on key of technique.
func Op(technique, op, key string, err error) error {
	return &Error{Technique: technique, Op: op, Key: key, Err: err}
}

// Error renders `lockzoo: <technique>: <op> "<key>": <cause>`, where the
// cause's text carries no "lockzoo: " of its own: a sentinel's prefix
// ("lockzoo: lock not acquired"), a wrapped *Error's header for the same
// technique, and the prefix of a Lua script's "ERR lockzoo: ..." reply are
// dropped, so the message names lockzoo and the technique once.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(e.Technique)
	b.WriteString(": ")
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(e.Key))
		b.WriteString(": ")
	}
	if e.Err == nil {
		return strings.TrimSuffix(b.String(), ": ")
	}
	b.WriteString(Strip(e.Err.Error(), e.Technique))
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Strip returns msg without the "lockzoo: " that starts it or one of its
// parts (after a space, "(" or a new line), and without the header
// "lockzoo: <technique>: " of a wrapped error of the same technique. A
// "lockzoo: " inside a word (a key such as "app-lockzoo: x" quoted in the
// message) is left alone.
func Strip(msg, technique string) string {
	if !strings.Contains(msg, prefix) {
		return msg
	}
	header := prefix + technique + ": "
	var b strings.Builder
	b.Grow(len(msg))
	for i := 0; i < len(msg); {
		if strings.HasPrefix(msg[i:], prefix) && startsPart(msg, i) {
			if technique != "" && strings.HasPrefix(msg[i:], header) {
				i += len(header)
			} else {
				i += len(prefix)
			}
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// startsPart reports whether msg[i:] starts the message or one of its
// parts: at 0, or after a space, "(" or a new line.
func startsPart(msg string, i int) bool {
	if i == 0 {
		return true
	}
	switch msg[i-1] {
	case ' ', '(', '\n':
		return true
	}
	return false
}
