package redisconn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// MaxInFlight is how many commands a Pipeline's connection carries
// without their replies at most; a caller that would exceed it sends its
// command on a connection of its own instead, so that a server that stops
// reading cannot fill the connection's buffers and block a write.
const MaxInFlight = 64

// Pipeline sends the commands that concurrent callers make to one Redis
// server over one shared connection. A caller queues its command and,
// unless another caller is writing, writes it together with every command
// queued meanwhile, and then with those queued while its write went out
// (one write at a time); one reader, a goroutine that lives while
// commands await their replies, reads the replies in order and hands each
// to its caller. Redis then reads and answers many commands per system
// call instead of one, and so do the writer and the reader: under load
// those system calls are most of what a command costs. A caller that
// finds no other command of the pipeline under way, or MaxInFlight
// commands awaiting their replies, sends its own on a connection of its
// own (Do), as if there were no pipeline: a lone caller pays nothing for
// it. Use it for commands that do not block the connection (not BLPOP):
// the commands behind one wait for it.
//
// Each reply goes to the caller whose command it answers, an error reply
// as that caller's error (a redis.Error), and so does a Refusal of the
// pool's connection (its command did not run; the connection goes on);
// DoTwo sends two commands one right after the other and returns both
// replies. A connection that fails fails every command that awaits a
// reply on it: each may or may not have run, as when a connection of
// one's own fails; the next command takes a new
// connection. A command queued behind the failure, never written, is not
// failed by it: it is sent again alone on a connection of its own.
//
// A reply reaches a caller only when it is proved to answer that caller's
// command: the writer ends each write with a mark, ECHO of a string no
// other write and no command's reply carries, and the reader hands a
// write's replies out only once the mark's reply comes in its place. A
// reply lost while the connection stays open (a proxy or middlebox that
// drops it) shifts every later one, so a mark's reply lands in a
// command's place or another reply in the mark's; the connection then
// fails every command on it as one that may have run (ErrUnmatchedReply),
// once the last mark written has answered, so that each has run before
// its caller can take it back, and it is dropped rather than pooled. Each
// write costs one ECHO more; a caller alone pays nothing.
//
// Each caller is bounded by its ctx as DoContext bounds a command: it
// returns when ctx is cancelled or its deadline passes, and its reply,
// when it comes, is dropped. The reader reads each reply with the latest
// deadline of the commands on the connection (none while one of them has
// none, as Do has none), so it ends when the connection has no command
// left, fails, or outlives that deadline; a server that stalls past it
// fails every command on the connection, those whose own deadline is
// later included. A lost reply that no other reply follows (a write's
// mark's, say) is noticed only when that deadline passes: the write's
// callers wait for their own deadlines, and one without a deadline, like
// the reader, for ever (as Do on a connection of its own would). A panic
// in the pool or the connection fails the commands concerned with an
// error wrapping ErrPanicked rather than crashing the process.
//
// The zero value is not usable; create one with NewPipeline or
// NewDeadlinePipeline. It is safe for concurrent use.
type Pipeline struct {
	pool       Pool
	byDeadline bool // callers' contexts end only by their deadlines (NewDeadlinePipeline)
	// yields: the writer yields the processor once before its first
	// write, and the reader once before it stops (NewDeadlinePipeline).
	yields bool
	calls  sync.Pool // idle *pipeCall
	// markPrefix begins every mark's string (see ErrUnmatchedReply).
	markPrefix []byte

	mu       sync.Mutex
	cur      *stream // the connection commands are written to; nil when none
	alone    int     // commands sent on connections of their own, under way
	lastMark uint64  // the id of the last mark written, on any connection
	// markArgs: a settled stream's mark arguments, for the next stream
	// (a stream's buffer is its writer's alone while it writes).
	markArgs []any
	// routes: over a Router (a Redis Cluster), one Pipeline per master
	// (pipeline_route.go); nil otherwise.
	routes *routes
}

// NewPipeline returns a Pipeline over the connections of pool.
func NewPipeline(pool Pool) *Pipeline {
	p := &Pipeline{pool: pool, markPrefix: newMarkPrefix()}
	p.routes = newRoutes(p)
	return p
}

// NewDeadlinePipeline returns a Pipeline over the connections of pool for
// callers whose contexts end only by their deadlines, never by a
// cancellation: a caller that sends alone reads its reply by the
// connection's read deadline (DoDeadline), which costs no goroutine,
// where DoContext starts one per call to watch the context.
//
// Its writer also yields the processor once before its first write, so
// that the callers ready to run queue their commands for the same write,
// and its reader once before it stops, so that a caller about to send
// still finds the shared connection: in an idle process, fewer and larger
// writes. But a yielding writer waits behind every goroutine ready to
// run, so beside CPU-bound goroutines a call can wait far longer
// (BenchmarkPipeline's busy-cpu runs show both). Use it for calls that
// pass through several goroutines anyway, and NewPipeline for calls made
// on the caller's own goroutine.
func NewDeadlinePipeline(pool Pool) *Pipeline {
	p := &Pipeline{pool: pool, byDeadline: true, yields: true, markPrefix: newMarkPrefix()}
	p.routes = newRoutes(p)
	return p
}

// stream is the Pipeline's connection while commands await their replies
// on it. Its fields are guarded by Pipeline.mu. One writer at a time (a
// caller, see send) calls conn's Send and Flush, the reader alone its
// Receive, as redigo allows; whichever of them stops last while no
// command awaits a reply returns conn to the pool (settle).
type stream struct {
	conn      redis.Conn
	pending   []*pipeCall // queued for the writer, in order
	waiting   []*pipeCall // handed to the writer, in order, awaiting their replies
	spare     []*pipeCall // the writer's other batch buffer
	out       []Command   // the writer's copy of the commands it writes, and the mark
	markArgs  []any       // the writer's mark's arguments (newMarkArgs)
	latest    time.Time   // the latest deadline of a command written
	unbounded int         // commands in waiting without a deadline
	broken    bool        // a write or a read failed: write no more
	writing   bool        // a writer runs
	reading   bool        // the reader runs
}

// pipeCall is one command in a Pipeline, or two sent together, from its
// caller to the reader and back. A caller that received its replies
// recycles it; one that left before does not, since the reader may still
// write it. The writer writes from copies of its calls' commands
// (stream.out), since the reader may hand a call its outcome (a failed
// connection) while the writer still writes, and its caller then reuses
// the call.
type pipeCall struct {
	cmds     [2]Command // the command, and the second sent with it (zero when none)
	deadline time.Time  // zero: none
	bounded  bool       // its ctx has a deadline
	replies  [2]Reply
	err      error         // the connection's failure, when the replies did not come
	mark     uint64        // the id of the mark written after it, the last of its write; 0: none
	done     chan struct{} // the reader sends once, when replies and err are set
	timer    *time.Timer   // the caller's deadline; nil until first needed
}

// size is how many commands c carries.
func (c *pipeCall) size() int {
	if c.cmds[1].Name == "" {
		return 1
	}
	return 2
}

// Do runs one command through the pipeline, bounded by ctx, and returns
// its reply. An error reply is returned as its redis.Error, a refused
// command as its *Refusal; a failed
// connection as its error; a ctx that ended before the reply as ctx's
// error (context.DeadlineExceeded for a deadline that passed). A ctx that
// has already ended returns its error and sends nothing.
func (p *Pipeline) Do(ctx context.Context, cmd string, args []any) (any, error) {
	r, _, err := p.do(ctx, Command{cmd, args}, Command{})
	if err == nil {
		err = r.Err
	}
	return r.Value, err
}

// DoTwo runs first and second through the pipeline one right after the
// other on one connection, bounded by ctx as Do bounds a command, and
// returns their replies, error replies included: a connection checked by
// first (CLIENT GETNAME, say) is the one second ran on. The error is the
// connection's failure or ctx's end before both replies came (then
// neither reply is given); a ctx that has already ended returns its error
// and sends nothing.
func (p *Pipeline) DoTwo(ctx context.Context, first, second Command) (Reply, Reply, error) {
	return p.do(ctx, first, second)
}

// do is Do and DoTwo: it runs first, and second unless it is zero.
func (p *Pipeline) do(ctx context.Context, first, second Command) (Reply, Reply, error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, Reply{}, err
	}
	if p.routes != nil {
		if sub := p.routes.of(p, first, second); sub != nil {
			return sub.do(ctx, first, second)
		}
	}
	p.mu.Lock()
	if (p.cur == nil && p.alone == 0) || (p.cur != nil && len(p.cur.waiting)+len(p.cur.pending) >= MaxInFlight) {
		return p.goAlone(ctx, first, second) // releases p.mu
	}
	c, _ := p.calls.Get().(*pipeCall)
	if c == nil {
		c = &pipeCall{done: make(chan struct{}, 1)}
	}
	deadline, bounded := ctx.Deadline()
	c.cmds, c.deadline, c.bounded = [2]Command{first, second}, deadline, bounded
	if err := p.send(ctx, c); err != nil { // releases p.mu
		c.cmds = [2]Command{}
		p.calls.Put(c)
		return Reply{}, Reply{}, err
	}
	var expired <-chan time.Time
	if bounded {
		d := time.Until(deadline)
		if c.timer == nil {
			c.timer = time.NewTimer(d)
		} else {
			c.timer.Reset(d)
		}
		expired = c.timer.C
	}
	select {
	case <-c.done:
	case <-cancelDone(ctx): // the deadline is expired's
		return Reply{}, Reply{}, fmt.Errorf("%w: the command was sent, its reply is dropped", ctx.Err())
	case <-expired:
		return Reply{}, Reply{}, fmt.Errorf("%w: the command was sent, its reply is dropped", context.DeadlineExceeded)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	replies, err := c.replies, c.err
	c.cmds, c.replies, c.err = [2]Command{}, [2]Reply{}, nil
	p.calls.Put(c)
	if errors.Is(err, errBroken) && ctx.Err() == nil {
		// Queued behind a write or read that failed, the commands were
		// never written: another caller's broken connection is not this
		// caller's failure. They go once more, alone on a connection of
		// their own (where a failure is theirs).
		p.mu.Lock()
		return p.goAlone(ctx, first, second)
	}
	return replies[0], replies[1], err
}

// goAlone, called with p.mu held, releases it and runs first and second
// alone on a connection of their own (doAlone), counted in p.alone
// meanwhile: a caller that finds no shared connection while one is alone
// starts the shared one.
func (p *Pipeline) goAlone(ctx context.Context, first, second Command) (Reply, Reply, error) {
	p.alone++
	p.mu.Unlock()
	r1, r2, err := p.doAlone(ctx, first, second)
	p.mu.Lock()
	p.alone--
	p.mu.Unlock()
	return r1, r2, err
}
