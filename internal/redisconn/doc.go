// Package redisconn is the transport to Redis that lockzoo's packages
// share: bounded commands on pooled connections, a Pipeline that carries
// the commands of concurrent callers over one shared connection, and
// scripts sent with EVALSHA and re-sent with EVAL on NOSCRIPT.
//
//	import "github.com/lockzoo/lockzoo/internal/redisconn"
//
// Every call is bounded by its ctx. Do, Eval and WithConn take a
// connection from a Pool for one call and return it; DoContext and EvalOn
// bound one command on a connection the caller holds, through redigo's
// DoContext or the connection's read deadline, whichever costs less.
// Bounded is a context with a deadline of its own that starts no timer
// unless something waits on its Done: these calls read its deadline as
// the connection's read deadline instead.
//
// A Pipeline writes the commands that concurrent callers queue in one
// write and reads their replies in order (pipeline.go, pipeline_read.go).
// Each write ends with a mark, an ECHO of a string no reply carries, and
// a reply reaches its caller only once the mark's reply came in its
// place (pipeline_mark.go): a reply lost while the connection stays open
// fails every command on the connection (ErrUnmatchedReply) rather than
// handing one caller another's reply. A caller alone sends on a
// connection of its own, so a lone caller pays nothing for the pipeline.
//
// Errors tell what may have happened: ErrNotSent, the server cannot have
// run the command (no connection); ErrUnmatchedReply and any other
// connection failure, it may have; a *Refusal (IsRefusal), the pool or
// the server refused that one command, which did not run; ErrPanicked, a Pool or connection
// panicked and the panic was recovered; ErrNilConn, the Pool returned
// neither a connection nor an error. A ctx that ended before the reply
// is wrapped in the error, so errors.Is(err, ctx.Err()) holds.
package redisconn
