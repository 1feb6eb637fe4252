package mcpkit

import (
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
)

// Where a [Layer] of a tool's pipeline was given.
const (
	FromServer = "server" // Server.Use, or the server's own validation
	FromTool   = "tool"   // the tool's own Tool.Middleware
)

// A Layer is one middleware in the pipeline of a tool, as
// [Server.Pipeline] reports it.
type Layer struct {
	// Name names the middleware by the function that made it, such as
	// "middleware.Timeout": the directory of the file that defines the
	// function (by convention, its package's name) and the function's
	// name. Authors need do nothing to have their middleware named. The
	// server's validation of arguments is "mcpkit.Validation".
	Name string `json:"name"`
	// From is FromServer or FromTool.
	From string `json:"from"`
	// Skipped is set for a middleware that a [ForTools] selection left out
	// for this tool: it is listed where it would be, and costs nothing.
	Skipped bool `json:"skipped,omitempty"`
}

// Pipeline returns the layers that serve calls to the tool called name,
// outermost first, and whether name is served: the server-wide middleware,
// the tool's own, and the server's validation, with the middleware of each
// [Chain] listed one by one and those a [ForTools] selection skipped for
// this tool marked as skipped. It is for tests ("is the time limit of
// report 5 minutes?") and debug endpoints, in the spirit of chi's Walk.
func (s *Server) Pipeline(name string) ([]Layer, bool) {
	n, ok := s.state.Load().byName[name]
	if !ok {
		return nil, false
	}
	return append([]Layer(nil), n.versions[0].layers...), true
}

// pipeline records the layers of a chain while a Server builds it,
// innermost first.
type pipeline struct {
	from   string
	layers []Layer
}

func (p *pipeline) len() int { return len(p.layers) }

func (p *pipeline) add(m Middleware, skipped bool) {
	p.layers = append(p.layers, Layer{Name: funcName(m), From: p.from, Skipped: skipped})
}

// funcName names the function that made m, such as "middleware.Timeout"
// for the closure that middleware.Timeout returns: the directory of the
// file that defines it, which is the package's name by convention, and the
// innermost named function. Neither the symbol's package prefix nor the
// functions around it can be trusted, since a constructor inlined into its
// caller names its closures after the caller ("main.main.Timeout.func1").
func funcName(m Middleware) string {
	f := runtime.FuncForPC(reflect.ValueOf(m).Pointer())
	if f == nil {
		return "?"
	}
	parts := strings.Split(strings.TrimSuffix(f.Name(), "-fm"), ".")
	name := parts[len(parts)-1]
	for i := len(parts) - 1; i > 0 && isClosureSuffix(parts[i]); i-- {
		name = parts[i-1]
	}
	file, _ := f.FileLine(f.Entry())
	dir := filepath.Base(filepath.Dir(file))
	if i := strings.IndexByte(dir, '@'); i > 0 {
		dir = dir[:i] // a module cache directory: mcpkit@v1.2.3
	}
	return dir + "." + name
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
