// Command scaleout is one replica of an MCP server meant to run several
// times behind a load balancer, sharing its state in Redis: a rate limit
// that holds across the replicas, a response cache any replica can answer
// from, idempotent calls that run once whichever replica gets them, and
// tools/list_changed announcements that reach clients listening on any
// replica.
//
// run.sh starts three replicas, one Redis and nginx in front of them (README.md
// says how to try it by hand):
//
//	bash examples/scaleout/run.sh
//
// One replica alone, against a Redis already running:
//
//	go run . -addr 127.0.0.1:8081 -redis 127.0.0.1:6379 -name r1
//
// Each replica serves MCP on /mcp, statelessly, so that any replica can
// answer any request, and three small endpoints: POST /admin/beta?on=true
// turns the beta_report tool on or off for the whole fleet, GET /healthz
// answers once the replica is up, and GET /readyz answers 503 once it
// drains.
//
// On SIGTERM a replica drains before it exits: new requests get 503 (nginx
// passes them to another replica), calls in flight finish, and the tasks
// of build_report it runs are handed over, through Redis, to the replicas
// that stay. rolling-restart.sh restarts the replicas one by one while
// clients call, and counts the calls that failed.
//
// No replica verifies bearer tokens here, to stay short. A client's token
// still separates its cached results and idempotency keys from everyone
// else's (a client without one gets neither: anonymous callers cannot be
// told apart), but it buys no rate budget of its own: the limit is one
// budget for every caller. Behind auth.RequireBearerToken, it would be one
// per verified user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/tasks"
	"github.com/mcpkit/mcpkit/tools"
	"github.com/mcpkit/mcpkit/visibility"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "scaleout:", err)
		os.Exit(1)
	}
}

// config is what one replica is started with.
type config struct {
	name      string        // the replica's name, in every result's _meta
	redisAddr string        // the shared Redis
	prefix    string        // prefix of every key this deployment uses in Redis
	perMinute int           // calls of limited_echo a minute, fleet-wide, per verified user (here, for all)
	cacheTTL  time.Duration // how long a slow_lookup result is served from the cache
	grace     time.Duration // how long a drain may take on SIGTERM
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("scaleout", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "address to serve on")
	var cfg config
	fs.StringVar(&cfg.name, "name", "r1", "this replica's name")
	fs.StringVar(&cfg.redisAddr, "redis", "127.0.0.1:6379", "address of the shared Redis")
	fs.StringVar(&cfg.prefix, "prefix", "scaleout:", "prefix of this deployment's keys in Redis")
	fs.IntVar(&cfg.perMinute, "per-minute", 5, "calls of limited_echo a minute across all replicas, per verified user (callers without one share a budget)")
	fs.DurationVar(&cfg.cacheTTL, "cache-ttl", time.Minute, "how long slow_lookup results are cached")
	fs.DurationVar(&cfg.grace, "grace", 20*time.Second, "how long calls in flight may take to finish on SIGTERM")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil)).With("replica", cfg.name)

	rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr})
	defer rdb.Close()
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := rdb.Ping(pingCtx).Err()
	cancel()
	if err != nil {
		return fmt.Errorf("redis at %s: %w", cfg.redisAddr, err)
	}

	rep, err := newReplica(ctx, cfg, rdb, logger)
	if err != nil {
		return err
	}
	defer rep.stop()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: rep.mux(), ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving MCP", "url", "http://"+ln.Addr().String()+"/mcp")
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		// Drain first: new requests get 503 (nginx tries another
		// replica), calls in flight finish, tasks are handed over, listen
		// streams end. Then nothing is left for Shutdown to wait for.
		stop, cancel := context.WithTimeout(context.Background(), cfg.grace)
		defer cancel()
		start := time.Now()
		if err := rep.srv.Drain(stop); err != nil {
			logger.Warn("drain incomplete", "err", err)
		}
		logger.Info("drained", "took", time.Since(start).Round(time.Millisecond))
		if err := hs.Shutdown(stop); err != nil {
			return hs.Close()
		}
		return nil
	}
}

// A replica is one scaleout server and the state it shares.
type replica struct {
	cfg    config
	rdb    redis.UniversalClient
	srv    *mcpkit.Server
	tasks  *tasks.Manager
	logger *slog.Logger
	beta   *betaFlag
	stop   func()
}

// newReplica builds the MCP server of one replica: its tools, the shared
// stores behind its middleware, and its subscription to the fleet's
// registry changes.
func newReplica(ctx context.Context, cfg config, rdb redis.UniversalClient, logger *slog.Logger) (*replica, error) {
	r := &replica{cfg: cfg, rdb: rdb, logger: logger, beta: &betaFlag{key: cfg.prefix + "flags:beta"}}
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(tasks.ExtensionID, map[string]any{})
	r.srv = mcpkit.NewServer(&mcp.Implementation{Name: "mcpkit-scaleout", Version: "0.1.0"},
		&mcpkit.ServerOptions{Logger: logger, SDKOptions: &mcp.ServerOptions{Capabilities: caps}})

	// Tasks live in Redis: any replica answers for a task another runs,
	// and takes up the tasks a draining replica hands over.
	r.tasks = tasks.NewManager(&tasks.Options{
		Store:        redisstore.NewTaskStore(rdb, &redisstore.TaskStoreOptions{Prefix: cfg.prefix}),
		PollInterval: 200 * time.Millisecond,
		Logger:       logger,
	})
	if err := r.tasks.Attach(r.srv); err != nil {
		return nil, err
	}

	// The three stores every replica shares, all in one Redis under one
	// prefix. The limit fails closed: while Redis is down, limited_echo
	// answers an internal error rather than running unlimited.
	limiter := redisstore.NewLimiter(rdb, float64(cfg.perMinute)/60, cfg.perMinute,
		&redisstore.LimiterOptions{Prefix: cfg.prefix, Logger: logger})
	cache := redisstore.NewCache(rdb, &redisstore.CacheOptions{Prefix: cfg.prefix})
	once := redisstore.NewIdempotencyStore(rdb, &redisstore.IdempotencyOptions{Prefix: cfg.prefix})

	// The order of the middleware package's documentation: the cache and
	// the limits between MaskErrors and Timeout, Idempotent inside
	// Timeout. servedBy goes outside the cache, so that a cached answer
	// names the replica that served it, not the one that computed it.
	r.srv.Use(
		middleware.Recommended(&middleware.RecommendedOptions{
			Logger: logger,
			Limits: []mcpkit.Middleware{
				r.servedBy,
				middleware.CacheResults(cache, &middleware.CacheOptions{TTL: cfg.cacheTTL, Logger: logger}),
				mcpkit.ForTools(mcpkit.Named("limited_echo"), middleware.RateLimit(limiter, nil)),
			},
		}),
		middleware.Idempotent(once, &middleware.IdempotencyOptions{Logger: logger}),
	)
	if err := r.addTools(); err != nil {
		return nil, err
	}

	// beta_report is served only while the fleet-wide flag is on.
	if err := r.beta.load(ctx, rdb); err != nil {
		return nil, err
	}
	visibility.New(visibility.Disable(func(t *mcpkit.Tool) bool {
		return t.Name == "beta_report" && !r.beta.on()
	})).Attach(r.srv)

	bus := redisstore.NewEventBus(rdb, &redisstore.EventBusOptions{Prefix: cfg.prefix, Logger: logger})
	stop, err := r.srv.ShareChanges(bus, &mcpkit.ShareOptions{
		// Another replica changed the catalog: read the flag again and
		// apply it here. The server then tells this replica's listeners.
		OnChange: func(ctx context.Context) error {
			if err := r.beta.load(ctx, rdb); err != nil {
				return fmt.Errorf("reading the beta flag: %w", err)
			}
			r.srv.Refresh()
			return nil
		},
	})
	if err != nil {
		bus.Close()
		return nil, err
	}
	r.stop = func() {
		stop()
		bus.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.tasks.Shutdown(ctx)
	}
	return r, nil
}

// servedBy names the replica that answered in every result's _meta, so
// that a client can see which replica served a cached or replayed result.
func (r *replica) servedBy(next mcpkit.Handler) mcpkit.Handler {
	return mcpkit.HandlerFunc(func(ctx context.Context, req *mcpkit.Request) (*mcp.CallToolResult, error) {
		res, err := next.ServeTool(ctx, req)
		if err != nil || res == nil {
			return res, err
		}
		out := *res
		out.Meta = mcp.Meta{}
		for k, v := range res.Meta {
			out.Meta[k] = v
		}
		out.Meta[MetaKeyServedBy] = r.cfg.name
		return &out, nil
	})
}

// MetaKeyServedBy is the key, in every result's _meta, of the name of the
// replica that answered.
const MetaKeyServedBy = "example.mcpkit.io/servedBy"

type echoIn struct {
	Text string `json:"text" maxLength:"200"`
}

type lookupIn struct {
	City string `json:"city" minLength:"1" maxLength:"64"`
}

type lookupOut struct {
	City       string `json:"city"`
	ComputedBy string `json:"computedBy"`
	Runs       int64  `json:"runs"`
}

type chargeIn struct {
	Account string `json:"account" minLength:"1" maxLength:"64"`
	Cents   int    `json:"cents" minimum:"1" maximum:"100000"`
}

type chargeOut struct {
	Account    string `json:"account"`
	Cents      int    `json:"cents"`
	ChargedBy  string `json:"chargedBy"`
	Executions int64  `json:"executions"`
}

func (r *replica) addTools() error {
	echo, err := tools.New("limited_echo", func(ctx context.Context, in echoIn) (string, error) {
		return in.Text, nil
	}, &tools.Options{Description: "Echo the text back; rate limited across all replicas."})
	if err != nil {
		return err
	}
	lookup, err := tools.New("slow_lookup", func(ctx context.Context, in lookupIn) (lookupOut, error) {
		// The number of real runs, fleet-wide: a cached answer does not
		// count.
		runs, err := r.rdb.Incr(ctx, r.cfg.prefix+"runs:slow_lookup").Result()
		if err != nil {
			return lookupOut{}, err
		}
		return lookupOut{City: in.City, ComputedBy: r.cfg.name, Runs: runs}, nil
	}, &tools.Options{
		Description: "Look a city up (slowly); results are cached for every replica.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	})
	if err != nil {
		return err
	}
	charge, err := tools.New("charge", func(ctx context.Context, in chargeIn) (chargeOut, error) {
		n, err := r.rdb.Incr(ctx, r.cfg.prefix+"runs:charge:"+in.Account).Result()
		if err != nil {
			return chargeOut{}, err
		}
		return chargeOut{Account: in.Account, Cents: in.Cents, ChargedBy: r.cfg.name, Executions: n}, nil
	}, &tools.Options{
		Description: "Charge an account. Send an idempotency key in _meta (" + middleware.MetaKeyIdempotencyKey + ") so that a retry charges once.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false)},
	})
	if err != nil {
		return err
	}
	// work takes a while, so that a rolling restart finds calls in
	// flight; build_report takes longer, as a task.
	work, err := tools.New("work", func(ctx context.Context, in workIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			return "worked " + strconv.Itoa(in.Millis) + " ms", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &tools.Options{Description: "Work for a while (millis), then answer."})
	if err != nil {
		return err
	}
	report, err := tools.New("build_report", func(ctx context.Context, in workIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Millis) * time.Millisecond):
			return "report built by " + r.cfg.name, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &tools.Options{Description: "Build a report (millis long), as a task for clients of the tasks extension."})
	if err != nil {
		return err
	}
	beta, err := tools.New("beta_report", func(ctx context.Context, in struct{}) (string, error) {
		return "beta report from " + r.cfg.name, nil
	}, &tools.Options{Description: "A tool being rolled out, served while the beta flag is on."})
	if err != nil {
		return err
	}
	return r.srv.Add(echo, lookup, charge, work, tasks.Tool(report, r.tasks, nil), beta)
}

type workIn struct {
	Millis int `json:"millis" minimum:"0" maximum:"60000"`
}

func ptr[T any](v T) *T { return &v }

// mux routes MCP and the demonstration's endpoints.
func (r *replica) mux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", r.srv.HTTPHandler(nil))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprintln(w, r.cfg.name)
	})
	mux.Handle("GET /readyz", r.srv.ReadinessHandler())
	mux.HandleFunc("POST /admin/beta", func(w http.ResponseWriter, req *http.Request) {
		on := req.URL.Query().Get("on") == "true"
		if err := r.beta.set(req.Context(), r.rdb, on); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		// A local change: this replica's clients are told by the SDK, and
		// ShareChanges publishes it for the other replicas.
		r.srv.Refresh()
		fmt.Fprintf(w, "beta_report on=%v (set by %s)\n", on, r.cfg.name)
	})
	return mux
}

// betaFlag is the fleet-wide on/off switch of beta_report: kept in Redis,
// read by every replica at start and whenever another replica changes the
// catalog.
type betaFlag struct {
	key string
	v   atomic.Bool
}

func (f *betaFlag) on() bool { return f.v.Load() }

func (f *betaFlag) load(ctx context.Context, rdb redis.UniversalClient) error {
	s, err := rdb.Get(ctx, f.key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	f.v.Store(s == "on")
	return nil
}

func (f *betaFlag) set(ctx context.Context, rdb redis.UniversalClient, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	if err := rdb.Set(ctx, f.key, v, 0).Err(); err != nil {
		return err
	}
	f.v.Store(on)
	return nil
}
