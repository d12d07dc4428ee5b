package check

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/cliflag"
)

// envAuth is redis-cli's environment variable for the password.
const envAuth = "REDISCLI_AUTH"

// config is what the flags ask for.
type config struct {
	targets []target
	// seeds are -cluster's addresses: Run adds every master of their
	// cluster to targets (masters), dialling with dial.
	seeds      []string
	dial       func(ctx context.Context, addr string) (redis.Conn, error)
	prefix     string
	json       bool
	techniques []string // empty: all
	timeout    time.Duration
	replicas   int // -replicas: strategy.Config.Replicas of the service's lua_release Lockers
}

// target is one address to check and how to connect to it.
type target struct {
	name string // host:port, without credentials
	dial func(ctx context.Context) (redis.Conn, error)
}

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	*l = append(*l, cliflag.List(s)...)
	return nil
}

// parseFlags reads args (those after "check"); getenv reads REDISCLI_AUTH.
// It returns flag.ErrHelp for -h, and cliflag.ErrUsage after printing the
// problem and the usage to stderr.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("lockcompare check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var addrs, urls, techs, seeds listFlag
	fs.Var(&addrs, "addrs", "comma-separated `host:port` or redis:// / rediss:// URLs of the servers a service would use (repeatable)")
	fs.Var(&seeds, "cluster", "comma-separated `host:port` of nodes of a Redis Cluster: checks every master of it, as a cluster.Pool finds them (repeatable)")
	fs.Var(&urls, "u", "a redis://[user:pass@]host:port[/db] or rediss:// `URL` to check, as redis-cli -u takes it (repeatable)")
	user := fs.String("user", "", "ACL `user` to authenticate as (redis-cli --user); a URL's own user wins")
	pass := fs.String("pass", "", "`password` (redis-cli --pass); default $"+envAuth+"; a URL's own password wins")
	fs.StringVar(pass, "a", "", "same as -pass (redis-cli -a)")
	prefix := fs.String("prefix", "lock:", "the key `prefix` the service's Lockers use (strategy.Config.Prefix)")
	asJSON := fs.Bool("json", false, "print the findings as JSON instead of the table")
	fs.Var(&techs, "techniques", "comma-separated techniques the service uses; hazards to the others become notes (default all: "+strings.Join(allTechniques(), ",")+")")
	useTLS := fs.Bool("tls", false, "connect to host:port addresses over TLS (redis-cli --tls); a URL's scheme decides for itself")
	caCert := fs.String("cacert", "", "PEM `file` of the CA certificates that sign the servers' (redis-cli --cacert); default the system's")
	insecure := fs.Bool("insecure", false, "do not verify the servers' TLS certificates (redis-cli --insecure)")
	timeout := fs.Duration("timeout", 5*time.Second, "`DURATION` bound on each address's connection and commands")
	replicas := fs.Int("replicas", 0, "the strategy.Config.Replicas the service's lua_release Lockers wait for (`N`); a primary with replicas and N 0 gets a finding naming the setting")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lockcompare check -addrs host:port[,host:port...] [flags]\n       lockcompare check -cluster host:port[,host:port...] [flags]\n\n"+
			"Checks Redis servers for the settings that break a lock's claimed properties.\n"+
			"Exit status: 0 nothing found breaks a claim, 1 something does, 2 the check could not run.\n\n")
		fs.PrintDefaults()
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return config{}, err
	}
	bad := func(format string, a ...any) (config, error) {
		return config{}, cliflag.Bad(fs, format, a...)
	}
	cfg := config{prefix: *prefix, json: *asJSON, timeout: *timeout, replicas: *replicas}
	if cfg.replicas < 0 {
		return bad("-replicas %d: want 0 or more", cfg.replicas)
	}
	if cfg.timeout <= 0 {
		return bad("-timeout %v: want a positive duration", cfg.timeout)
	}
	if cfg.prefix == "" {
		return bad("-prefix: want a non-empty prefix (lockzoo's default is \"lock:\")")
	}
	for _, t := range techs {
		if !slices.Contains(allTechniques(), t) {
			return bad("-techniques: unknown technique %q (known: %s)", t, strings.Join(allTechniques(), ", "))
		}
	}
	cfg.techniques = techs
	password := *pass
	if password == "" {
		password = getenv(envAuth)
	}
	auth := []redis.DialOption{redis.DialConnectTimeout(cfg.timeout), redis.DialReadTimeout(cfg.timeout), redis.DialWriteTimeout(cfg.timeout)}
	if *user != "" {
		auth = append(auth, redis.DialUsername(*user))
	}
	if password != "" {
		auth = append(auth, redis.DialPassword(password))
	}
	if *useTLS {
		auth = append(auth, redis.DialUseTLS(true))
	}
	if *caCert != "" || *insecure {
		tc, err := tlsConfig(*caCert, *insecure)
		if err != nil {
			return bad("-cacert: %v", err)
		}
		auth = append(auth, redis.DialTLSConfig(tc), redis.DialTLSSkipVerify(*insecure))
	}
	for _, a := range append(addrs, urls...) {
		t, err := newTarget(a, *useTLS, auth)
		if err != nil {
			return bad("%v", err)
		}
		cfg.targets = append(cfg.targets, t)
	}
	for _, a := range seeds {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return bad("-cluster: address %q: want host:port: %v", a, err)
		}
	}
	cfg.seeds = seeds
	cfg.dial = func(ctx context.Context, addr string) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", addr, auth...)
	}
	if len(cfg.targets) == 0 && len(cfg.seeds) == 0 {
		return bad("no address: give -addrs host:port[,host:port...], -u URL or -cluster host:port")
	}
	return cfg, nil
}

// tlsConfig returns the TLS configuration that trusts the certificates in
// the PEM file caFile (the system's when "") and, when insecure, verifies
// nothing.
func tlsConfig(caFile string, insecure bool) (*tls.Config, error) {
	tc := &tls.Config{InsecureSkipVerify: insecure} // true only with -insecure, as redis-cli --insecure
	if caFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	tc.RootCAs = x509.NewCertPool()
	if !tc.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", caFile)
	}
	return tc, nil
}

// newTarget reads one address: host:port (over TLS when useTLS), or a
// redis:// or rediss:// URL that redigo's DialURL takes (its scheme
// decides TLS, and its user and password win over opts').
func newTarget(addr string, useTLS bool, opts []redis.DialOption) (target, error) {
	if !strings.Contains(addr, "://") {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return target{}, fmt.Errorf("address %q: want host:port or a redis:// URL: %v", addr, err)
		}
		name := addr
		if useTLS {
			name = "rediss://" + addr
		}
		return target{name: name, dial: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialContext(ctx, "tcp", addr, opts...)
		}}, nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return target{}, fmt.Errorf("URL: %v", err) // url's error quotes the URL, password included: it is the caller's own
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return target{}, fmt.Errorf("URL %s: scheme %q: want redis or rediss", u.Redacted(), u.Scheme)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, "6379"
	}
	if host == "" {
		host = "localhost"
	}
	name := net.JoinHostPort(host, port)
	if u.Scheme == "rediss" {
		name = "rediss://" + name
	}
	return target{name: name, dial: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, addr, opts...)
	}}, nil
}
