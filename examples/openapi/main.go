// Command openapi serves a REST API described by an OpenAPI document, the
// Swagger Petstore (petstore.json, OpenAPI 3.1), both as itself and as MCP
// tools: one tool per operation of its "pet" and "store" tags, built by
// package openapi from the document and served by the API's own
// http.Handler in the same process, with no network in between.
//
//	go run ./examples/openapi                      # in examples/openapi
//	go run . -addr 127.0.0.1:9000
//
// The REST API answers on /api/v3/... and MCP on /mcp, statelessly, for
// clients of every protocol version. Each call is validated against the
// tool's input schema (generated from the operation's parameters and
// body) by the mcpkit server before it reaches the API, behind the
// recommended middleware chain (logging, panic recovery, masked internal
// errors, a time limit). An answer of the API other than 2xx is a tool
// error with its status and body: ask for a pet that does not exist.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/middleware"
	"github.com/mcpkit/mcpkit/openapi"
)

// petstoreDocument is the Petstore's OpenAPI 3.1 document, from the npm
// package @readme/oas-examples 8.2.2 (MIT, LICENSE-petstore.md).
//
//go:embed petstore.json
var petstoreDocument []byte

// apiPrefix is where the REST API is served: the path of the document's
// server URL.
const apiPrefix = "/api/v3"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "openapi:", err)
		os.Exit(1)
	}
}

// run parses args and serves until ctx is done.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("openapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to serve the API and MCP on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	h, err := newHandler(logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shutdown)
	}()
	fmt.Fprintf(stderr, "openapi: REST API on http://%s%s/, MCP on http://%s/mcp\n", ln.Addr(), apiPrefix, ln.Addr())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newHandler returns the HTTP handler of the whole program: the REST API
// and the MCP server whose tools call it.
func newHandler(logger *slog.Logger) (http.Handler, error) {
	srv, api, err := newServer(logger)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(apiPrefix+"/", api)
	mux.Handle("/mcp", srv.HTTPHandler(nil))
	return mux, nil
}

// newServer returns the MCP server with the Petstore's tools, and the REST
// API (under apiPrefix) that they call.
func newServer(logger *slog.Logger) (*mcpkit.Server, http.Handler, error) {
	api := http.StripPrefix(apiPrefix, newPetstore().routes())
	doc, err := openapi.Load(petstoreDocument)
	if err != nil {
		return nil, nil, err
	}
	tools, err := doc.Tools(&openapi.Options{
		Tags:    []string{"pet", "store"},
		Handler: api,
		BaseURL: apiPrefix, // the tools' requests carry the API's full paths
	})
	if err != nil {
		return nil, nil, err
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "petstore", Version: "1.0.0"}, nil)
	srv.Use(middleware.Recommended(&middleware.RecommendedOptions{Logger: logger}))
	if err := srv.Add(tools...); err != nil {
		return nil, nil, err
	}
	return srv, api, nil
}

// A petstore keeps pets and orders in memory.
type petstore struct {
	mu     sync.Mutex
	pets   map[int64]pet
	orders map[int64]order
	nextID int64
}

type pet struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Category  *category `json:"category,omitempty"`
	PhotoURLs []string  `json:"photoUrls"`
	Tags      []tag     `json:"tags,omitempty"`
	Status    string    `json:"status,omitempty"`
}

type category struct {
	ID   int64  `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

type tag struct {
	ID   int64  `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

type order struct {
	ID       int64  `json:"id"`
	PetID    int64  `json:"petId"`
	Quantity int32  `json:"quantity"`
	ShipDate string `json:"shipDate,omitempty"`
	Status   string `json:"status,omitempty"`
	Complete bool   `json:"complete"`
}

func newPetstore() *petstore {
	return &petstore{
		pets: map[int64]pet{
			1: {ID: 1, Name: "Rex", PhotoURLs: []string{}, Status: "available", Category: &category{ID: 1, Name: "Dogs"}},
			2: {ID: 2, Name: "Tom", PhotoURLs: []string{}, Status: "sold", Category: &category{ID: 2, Name: "Cats"}},
		},
		orders: map[int64]order{},
		nextID: 3,
	}
}

// apiError is the Petstore's error body.
type apiError struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, apiError{Code: status, Type: "error", Message: msg})
}

// routes returns the API's router: the operations of the "pet" and
// "store" tags that do not upload files.
func (s *petstore) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /pet", s.savePet(false))
	mux.HandleFunc("PUT /pet", s.savePet(true))
	mux.HandleFunc("GET /pet/findByStatus", func(w http.ResponseWriter, r *http.Request) {
		statuses := r.URL.Query()["status"]
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []pet{}
		for _, p := range s.sortedPets() {
			if slices.Contains(statuses, p.Status) {
				out = append(out, p)
			}
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /pet/findByTags", func(w http.ResponseWriter, r *http.Request) {
		tags := r.URL.Query()["tags"]
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []pet{}
		for _, p := range s.sortedPets() {
			if slices.ContainsFunc(p.Tags, func(t tag) bool { return slices.Contains(tags, t.Name) }) {
				out = append(out, p)
			}
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("GET /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "petId")
		if !ok {
			return
		}
		s.mu.Lock()
		p, found := s.pets[id]
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusNotFound, "Pet not found")
			return
		}
		reply(w, http.StatusOK, p)
	})
	mux.HandleFunc("POST /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "petId")
		if !ok {
			return
		}
		if err := r.ParseForm(); err != nil {
			fail(w, http.StatusMethodNotAllowed, "Invalid input")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		p, found := s.pets[id]
		if !found {
			fail(w, http.StatusNotFound, "Pet not found")
			return
		}
		if v := r.PostForm.Get("name"); v != "" {
			p.Name = v
		}
		if v := r.PostForm.Get("status"); v != "" {
			p.Status = v
		}
		s.pets[id] = p
		reply(w, http.StatusOK, p)
	})
	mux.HandleFunc("DELETE /pet/{petId}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "petId")
		if !ok {
			return
		}
		s.mu.Lock()
		_, found := s.pets[id]
		delete(s.pets, id)
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusNotFound, "Pet not found")
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /store/inventory", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		counts := map[string]int32{}
		for _, p := range s.pets {
			counts[p.Status]++
		}
		reply(w, http.StatusOK, counts)
	})
	mux.HandleFunc("POST /store/order", func(w http.ResponseWriter, r *http.Request) {
		var o order
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			fail(w, http.StatusBadRequest, "Invalid Order")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, found := s.pets[o.PetID]; !found {
			fail(w, http.StatusBadRequest, "Invalid Order: no pet "+strconv.FormatInt(o.PetID, 10))
			return
		}
		o.ID = s.nextID
		s.nextID++
		if o.Status == "" {
			o.Status = "placed"
		}
		s.orders[o.ID] = o
		reply(w, http.StatusOK, o)
	})
	mux.HandleFunc("GET /store/order/{orderId}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "orderId")
		if !ok {
			return
		}
		s.mu.Lock()
		o, found := s.orders[id]
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusNotFound, "Order not found")
			return
		}
		reply(w, http.StatusOK, o)
	})
	mux.HandleFunc("DELETE /store/order/{orderId}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := pathID(w, r, "orderId")
		if !ok {
			return
		}
		s.mu.Lock()
		_, found := s.orders[id]
		delete(s.orders, id)
		s.mu.Unlock()
		if !found {
			fail(w, http.StatusNotFound, "Order not found")
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	return mux
}

// savePet adds a pet (POST) or replaces one (PUT).
func (s *petstore) savePet(replace bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p pet
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Name == "" {
			fail(w, http.StatusMethodNotAllowed, "Invalid input")
			return
		}
		if p.PhotoURLs == nil {
			p.PhotoURLs = []string{}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if replace {
			if _, found := s.pets[p.ID]; !found {
				fail(w, http.StatusNotFound, "Pet not found")
				return
			}
		} else {
			p.ID = s.nextID
			s.nextID++
		}
		s.pets[p.ID] = p
		reply(w, http.StatusOK, p)
	}
}

// sortedPets returns the pets by id; s.mu is held.
func (s *petstore) sortedPets() []pet {
	ids := make([]int64, 0, len(s.pets))
	for id := range s.pets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]pet, len(ids))
	for i, id := range ids {
		out[i] = s.pets[id]
	}
	return out
}

func pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil {
		fail(w, http.StatusBadRequest, "Invalid ID supplied")
		return 0, false
	}
	return id, true
}
