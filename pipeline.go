package mcpkit

import (
	"bufio"
	"context"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Where a [Layer] of a tool's pipeline was given.
const (
	FromServer   = "server"   // Server.Use, or the server's own validation
	FromTool     = "tool"     // the tool's own Tool.Middleware
	FromPrompt   = "prompt"   // the prompt's own Prompt.Middleware
	FromResource = "resource" // the resource's own Resource.Middleware (or the template's)
)

// A Layer is one middleware in the pipeline of a tool, as
// [Server.Pipeline] reports it.
type Layer struct {
	// Name names the middleware: the name given to [NamedMiddleware], or
	// else the function that made it, such as "middleware.Timeout": the
	// last element of its package's import path ("main" for a command,
	// also in its tests) and the function's name. Authors need do nothing
	// to have their middleware named, and the name does not depend on
	// where the source sits. (A command's tests know its code by the
	// import path alone: "main" is read from the package clause of the
	// source, by its file name in the working directory when built with
	// -trimpath, as go test runs them; a test binary run elsewhere without
	// its source names it by the last element of the import path.) The server's validation of arguments is
	// "mcpkit.Validation"; [RequireScopes] is "mcpkit.RequireScopes", with
	// its scopes in Settings.
	Name string `json:"name"`
	// From is FromServer or FromTool.
	From string `json:"from"`
	// Skipped is set for a middleware that a [ForTools] or [For]
	// selection left out for this target: it is listed where it would be,
	// and costs nothing. A skipped [Chain], [ForTools] or [For]
	// (middleware.Bulkhead is one) lists its layers, under the names they
	// have where they apply. In a prompt's or a resource's pipeline, a
	// layer whose Handler does not serve that kind is skipped too.
	Skipped bool `json:"skipped,omitempty"`
	// Reason says why a layer of a prompt's or a resource's pipeline (see
	// [Server.PromptPipeline], [Server.ResourcePipeline]) is skipped: its
	// Handler does not serve the kind, or a selection holds it.
	Reason string `json:"reason,omitempty"`
	// Settings are what the layer says of its configuration (a time limit,
	// a size limit), when the Handler its middleware returned implements
	// [LayerSettings]. Skipped layers have none.
	Settings []Setting `json:"settings,omitempty"`
}

// A Setting is one setting of a layer, as [Server.Pipeline] shows it.
type Setting struct {
	// Name says what is set: "timeout", "argumentBytes", "concurrency",
	// "scopes".
	Name string `json:"name"`
	// Value is the setting as configured: "30s", "1048576", "2".
	Value string `json:"value"`
	// Cap, when positive, says that the layer bounds every call it serves
	// to Cap, in a unit of Name's own (nanoseconds for a time, bytes for a
	// size), before the layers inside it run: so a layer inside another
	// whose setting of the same Name has a lower Cap can never take
	// effect. [Server.Add] reports such a layer (see [LayerSettings]).
	Cap int64 `json:"-"`
}

// LayerSettings is implemented by the Handler a middleware returns, to
// show its settings in [Server.Pipeline]. The middleware of package
// middleware implement it (Timeout, ArgumentSizeLimit, ...).
//
// When a Server builds a tool's chain, it compares the Caps of the
// settings of each name, outermost first: an inner layer whose Cap is
// above an outer one's can never take effect (a 5-minute Timeout inside a
// 30-second one), and the Server logs a warning, at [ServerOptions.Logger],
// naming the tool and both layers. It is a warning, not an error, since
// the chain still serves calls, by the outer layer's bound.
type LayerSettings interface {
	LayerSettings() []Setting
}

// moot returns, for the layers of a chain (outermost first), each layer
// that can never take effect because a layer outside it has a lower Cap
// for the same setting, with that layer and the setting's name.
func moot(layers []Layer) (out []mootLayer) {
	tightest := map[string]struct {
		layer int
		cap   int64
	}{}
	for i, l := range layers {
		for _, st := range l.Settings {
			if st.Cap <= 0 {
				continue
			}
			if t, ok := tightest[st.Name]; ok && st.Cap > t.cap {
				out = append(out, mootLayer{inner: i, outer: t.layer, setting: st.Name})
				continue
			}
			tightest[st.Name] = struct {
				layer int
				cap   int64
			}{i, st.Cap}
		}
	}
	return out
}

type mootLayer struct {
	inner, outer int
	setting      string
}

// pipeline records the layers of a chain while a Server builds it,
// innermost first.
type pipeline struct {
	from   string
	layers []Layer

	// requirements are the RequireToken layers of the chain, innermost
	// first as they are built (buildChain reverses them).
	requirements []*requirement

	// named are the tool names the chain's ForTools selections were
	// written with, for the report of those that select no tool.
	named []namedUse
}

// A namedUse is where a user wrote tool names: a ForTools selection, a
// Visibility, a catalog transform.
type namedUse struct {
	names []string
	in    string // "mcpkit.ForTools(middleware.Bulkhead)", "*visibility.Rules"
}

func (p *pipeline) len() int { return len(p.layers) }

// noteNames records the names of a selection (ForTools, For, as label
// says) whose layers are those recorded from the n-th on (innermost
// first).
func (p *pipeline) noteNames(label string, names []string, n int) {
	if len(names) == 0 {
		return
	}
	var in []string
	for i := p.len() - 1; i >= n; i-- {
		in = append(in, p.layers[i].Name)
	}
	p.named = append(p.named, namedUse{names: names, in: label + "(" + strings.Join(in, ", ") + ")"})
}

func (p *pipeline) add(m Middleware, skipped bool) {
	p.layers = append(p.layers, Layer{Name: funcName(m), From: p.from, Skipped: skipped})
}

// addSkipped records m as a layer that a [ForTools] selection left out of
// the chain of tool t, without building it: mcpkit's own combinators
// ([NamedMiddleware], [Chain], [ForTools]) are asked the names of their
// layers, any other middleware is named by the function that made it.
// So a skipped middleware.Bulkhead or Chain(RequireScopes(...)) is listed
// under the names its layers have where it applies.
func (p *pipeline) addSkipped(m Middleware, t *Tool) {
	switch reflect.ValueOf(m).Pointer() {
	case namedMiddlewarePC, chainPC, forToolsPC:
	default:
		p.add(m, true)
		return
	}
	n := p.len()
	m(boundHandler{tool: t, rec: p, next: probe{}})
	for i := n; i < p.len(); i++ {
		p.layers[i].Skipped = true
	}
}

// probe is the next handler given to one of mcpkit's combinators to learn
// the names of its layers alone: they record the names and build nothing.
type probe struct{}

func (probe) ServeTool(context.Context, *Request) (*mcp.CallToolResult, error) {
	panic("mcpkit: a skipped layer was called")
}

// probing reports whether b is the handler addSkipped gives a combinator.
func (b boundHandler) probing() bool {
	_, ok := b.next.(probe)
	return ok
}

// The code of every Middleware that NamedMiddleware, Chain and ForTools
// return: they are never inlined, so there is one copy of each.
var namedMiddlewarePC, chainPC, forToolsPC uintptr

func init() {
	// In a function, since Chain and ForTools refer to addSkipped.
	namedMiddlewarePC = reflect.ValueOf(NamedMiddleware("mcpkit.probe", func(h Handler) Handler { return h })).Pointer()
	chainPC = reflect.ValueOf(Chain()).Pointer()
	forToolsPC = reflect.ValueOf(ForTools(func(*Tool) bool { return false })).Pointer()
}

// NamedMiddleware returns m, listed as name by [Server.Pipeline] instead of
// the name of the function that made m: for a middleware author who wants
// a name of their own ("acme.requireTenant"), or for middleware made by a
// generic function. It costs nothing per call: inside a [Server], the
// chain holds what m returns, unwrapped, and a [ForTools] selection that
// skips it never builds it. A middleware that lists its own layers
// ([Chain], [ForTools]) keeps their names. NamedMiddleware panics if name
// is empty or m is nil.
//
//go:noinline
func NamedMiddleware(name string, m Middleware) Middleware {
	if name == "" || m == nil {
		panic("mcpkit: NamedMiddleware: empty name or nil middleware")
	}
	return func(next Handler) Handler {
		if pb, ok := next.(targetBound); ok {
			n := pb.rec.len()
			h := m(next)
			serves := pb.serves(h)
			if pb.rec.len() == n {
				l := Layer{Name: name, From: pb.rec.from, Skipped: !serves}
				if !serves {
					l.Reason = pb.skipReason()
				} else if ls, ok := h.(LayerSettings); ok {
					l.Settings = ls.LayerSettings()
				}
				pb.rec.layers = append(pb.rec.layers, l)
			}
			if !serves {
				return next
			}
			return h
		}
		b, ok := next.(boundHandler)
		if !ok {
			return m(next)
		}
		if b.probing() {
			b.rec.layers = append(b.rec.layers, Layer{Name: name, From: b.rec.from})
			return next
		}
		n := b.rec.len()
		h := m(next)
		if b.rec.len() == n {
			l := Layer{Name: name, From: b.rec.from}
			if ls, ok := h.(LayerSettings); ok {
				l.Settings = ls.LayerSettings()
			}
			b.rec.layers = append(b.rec.layers, l)
		}
		return h
	}
}

// funcName names the function that made fn (a Middleware, a
// CatalogTransform), such as "middleware.Timeout" for the closure that
// middleware.Timeout returns (see [Layer.Name]).
func funcName(fn any) string {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return "?"
	}
	file, _ := f.FileLine(f.Entry())
	return layerName(f.Name(), file, mainPackage(), packageClause)
}

// layerName names a function by its symbol sym and the file that defines
// it: the last element of its package's import path and its innermost
// named function, both read from the symbol, so that the name is the same
// wherever the source was checked out. mainPath is the import path of the
// binary's main package (under go test, of the package tested), and
// clause reads the package clause of a file ("" when it cannot).
//
// Two cases need the file. A constructor inlined into a caller in another
// package names its closures after the caller ("main.main.Timeout.func1"):
// there the closure's own package is the directory of its file, by
// convention the package's name. And the code of a command is "main",
// which its symbols say in a build ("main.audit.func1") but not in its
// tests ("example.com/app.audit.func1": nothing at run time names a
// package under test but its import path), nor when its own constructor
// is inlined into main: there the file's package clause says whether it
// is a command's. Built with -trimpath, a file is named by its import
// path ("example.com/app/audit.go"): in a build, a file in the main
// package's import path is the command's; in tests, the clause is read
// from the file by its base name in the working directory, the package's
// own directory where go test runs them.
func layerName(sym, file, mainPath string, clause func(file string) string) string {
	sym = strings.TrimSuffix(sym, "-fm")
	pkgPath, rest := sym, ""
	if i := strings.IndexByte(sym[strings.LastIndexByte(sym, '/')+1:], '.'); i >= 0 {
		i += strings.LastIndexByte(sym, '/') + 1
		pkgPath, rest = sym[:i], sym[i+1:]
	}
	pkg := pkgPath[strings.LastIndexByte(pkgPath, '/')+1:]
	parts := strings.Split(rest, ".")
	named := len(parts)
	for named > 1 && isClosureSuffix(parts[named-1]) {
		named--
	}
	name := parts[named-1]
	inlined := named >= 2 && named < len(parts) && !strings.HasPrefix(parts[0], "(")
	ofMain := pkgPath == "main" || pkgPath == mainPath
	command := func() bool {
		if clause(file) == "main" {
			return true
		}
		// Built with -trimpath, a file is named by its package's import
		// path, and cannot be read by that name.
		if pathpkg.Dir(filepath.ToSlash(file)) != mainPath || mainPath == "" {
			return false
		}
		if pkgPath == "main" {
			return true // the symbol says it
		}
		// A command's tests: go test runs them in the package's
		// directory, where the file is at hand by its own name.
		return pkgPath == mainPath && clause(pathpkg.Base(filepath.ToSlash(file))) == "main"
	}
	switch {
	case inlined && ofMain && command():
		return "main." + name
	case inlined:
		// A closure of a function inside another function: the inner one
		// was inlined into the outer, perhaps from another package.
		if dir := filepath.Base(filepath.Dir(file)); dir != pkg && dir != "." && dir != string(filepath.Separator) {
			if i := strings.IndexByte(dir, '@'); i > 0 {
				dir = dir[:i] // a module cache directory: mcpkit@v1.2.3
			}
			pkg = dir
		}
	case ofMain && pkgPath != "main" && command():
		pkg = "main" // a command's code in its tests
	}
	return pkg + "." + name
}

// mainPackage returns the import path of the binary's main package (under
// go test, of the package tested), or "".
var mainPackage = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return bi.Path
})

// packageClauses holds the package name of each source file packageClause
// read: facts of the binary, read once each.
var packageClauses sync.Map // file name -> package name

// packageClause returns the name in the package clause of the Go source
// file, or "" when it cannot be read.
func packageClause(file string) string {
	if v, ok := packageClauses.Load(file); ok {
		return v.(string)
	}
	name := ""
	if f, err := os.Open(file); err == nil {
		name = readPackageClause(bufio.NewReader(io.LimitReader(f, 1<<16)))
		f.Close()
	}
	packageClauses.Store(file, name)
	return name
}

// readPackageClause returns the package name of the Go source r, after its
// comments (a license, build constraints), or "".
func readPackageClause(r *bufio.Reader) string {
	var word []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return ""
		}
		switch {
		case c == '/':
			next, _ := r.ReadByte()
			switch next {
			case '/':
				if _, err := r.ReadString('\n'); err != nil {
					return ""
				}
			case '*':
				for prev := byte(0); ; {
					c, err := r.ReadByte()
					if err != nil {
						return ""
					}
					if prev == '*' && c == '/' {
						break
					}
					prev = c
				}
			default:
				return ""
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if len(word) > 0 {
				if string(word) != "package" {
					return ""
				}
				return readIdent(r)
			}
		default:
			word = append(word, c)
			if len(word) > len("package") {
				return ""
			}
		}
	}
}

// readIdent returns the identifier that comes next in r, after blanks.
func readIdent(r *bufio.Reader) string {
	var id []byte
	for {
		c, err := r.ReadByte()
		switch {
		case err == nil && (c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80):
			id = append(id, c)
		case err == nil && len(id) == 0 && (c == ' ' || c == '\t'):
		default:
			return string(id)
		}
	}
}

// isClosureSuffix reports whether s is a part the compiler adds to the name
// of a closure: "func1", "2", "gowrap1".
func isClosureSuffix(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "func"), "gowrap")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
