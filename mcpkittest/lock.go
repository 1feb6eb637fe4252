package mcpkittest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/internal/defdiff"
	"github.com/mcpkit/mcpkit/internal/version"
)

// UpdateLockEnv is the environment variable that makes [CheckLock] write
// the lockfile instead of checking it: run
//
//	MCPKIT_UPDATE_LOCK=1 go test ./...
//
// to create lockfiles or to record changes. Any value that
// [strconv.ParseBool] reads as true will do. It is an environment variable,
// not a flag, because a library's flags collide with those of the tests
// that import it.
const UpdateLockEnv = "MCPKIT_UPDATE_LOCK"

// lockVersion is the version of the lockfile format.
const lockVersion = 1

// A lockFile is the JSON document of a lockfile.
type lockFile struct {
	LockVersion int         `json:"lockVersion"`
	Tools       []lockEntry `json:"tools"`
}

// A lockEntry is one tool in a lockfile.
type lockEntry struct {
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Fingerprint string          `json:"fingerprint"`
	Definition  json.RawMessage `json:"definition"`
}

// CheckLock checks that the tools srv serves have not changed since they
// were recorded in the lockfile at path, unless their versions say so, and
// reports what breaks with tb.Errorf. Use it in a test of your server:
//
//	func TestToolsLocked(t *testing.T) {
//		mcpkittest.CheckLock(t, newServer(), "testdata/tools.lock.json")
//	}
//
// CheckLock lists the tools as a client sees them: it connects an SDK
// client in memory (protocol version [StatelessVersion], no HTTP headers,
// no token) and reads every page of tools/list, so what transforms,
// visibility rules and list middleware (such as $ref dereferencing) make of
// the tools is what is locked. The version of a tool is the Version of the
// [mcpkit.Tool] that srv serves under the listed name; a tool that srv does
// not know by that name (one registered on the SDK server directly, or
// renamed by list middleware) has the version "".
//
// For each tool, the lockfile holds its name, version, [Fingerprint] and
// definition in canonical form, so that a later run can show and classify
// what changed (see [Compare]). The check fails when
//
//   - a tool's definition changed and its version did not;
//   - a change is breaking and the major version did not change: versions
//     compare as dotted numbers, as for [mcpkit.Tool.Version], and the
//     major version is the part before the first dot, with any leading "v"
//     dropped, so "1.4" to "1.5" with a removed argument fails and "1.4" to
//     "2.0" passes (a tool that had no version gets one: a major change);
//   - a tool's version went down;
//   - a tool in the lockfile is gone (removing a tool breaks its clients);
//   - a tool is not in the lockfile yet, or the lockfile is missing,
//     unreadable, or was edited so that an entry's fingerprint no longer
//     matches its definition.
//
// A change that passes (a new version, with a new major version if it
// breaks) is logged with tb.Logf: the lockfile is out of date, and until it
// is written again later changes are judged against the definition it
// holds. Record changes by running the test with [UpdateLockEnv] set
// (MCPKIT_UPDATE_LOCK=1): CheckLock then writes the current tools to path
// (creating its directory if needed), logs what changed, and passes. It
// writes to a temporary file in the same directory and renames it, so that
// an interrupted run leaves the old lockfile or the new one, never half of
// one; an unchanged lockfile is not rewritten.
//
// The lockfile is JSON, indented, with the tools sorted by name and the
// keys of each definition sorted, so that its diffs read well in review.
//
// CheckLock reports failures with tb.Errorf and never stops the test.
func CheckLock(tb testing.TB, srv *mcpkit.Server, path string) {
	tb.Helper()
	current, err := lockCatalog(tb.Context(), srv)
	if err != nil {
		tb.Errorf("mcpkittest: CheckLock: %v", err)
		return
	}
	locked, readErr := readLock(path)

	if updateLock() {
		if readErr == nil {
			for _, f := range checkLock(locked, current) {
				tb.Logf("mcpkittest: %s: recording: %s", path, f.report(false))
			}
		}
		written, err := writeLock(path, current)
		switch {
		case err != nil:
			tb.Errorf("mcpkittest: CheckLock: %v", err)
		case written:
			tb.Logf("mcpkittest: wrote %s (%s)", path, plural(len(current), "tool"))
		}
		return
	}

	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		tb.Errorf("mcpkittest: %s does not exist; create it: %s=1 go test", path, UpdateLockEnv)
		return
	case readErr != nil:
		tb.Errorf("mcpkittest: %s: %v; write it again: %s=1 go test", path, readErr, UpdateLockEnv)
		return
	}
	for _, f := range checkLock(locked, current) {
		if f.fail {
			tb.Errorf("mcpkittest: %s: %s", path, f.report(true))
		} else {
			tb.Logf("mcpkittest: %s: %s", path, f.report(true))
		}
	}
}

// updateLock reports whether UpdateLockEnv asks CheckLock to write.
func updateLock() bool {
	b, err := strconv.ParseBool(os.Getenv(UpdateLockEnv))
	return err == nil && b
}

// lockCatalog returns the tools srv lists to a client, as lockfile entries
// sorted by name.
func lockCatalog(ctx context.Context, srv *mcpkit.Server) ([]lockEntry, error) {
	cs, err := ConnectInMemory(ctx, srv, &Options{ProtocolVersion: StatelessVersion})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var entries []lockEntry
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		version := withoutVersionMeta(tool)
		canon, err := canonical(tool)
		if err != nil {
			return nil, err
		}
		entries = append(entries, lockEntry{
			Name:        tool.Name,
			Version:     version,
			Fingerprint: defdiff.Fingerprint(canon),
			Definition:  canon,
		})
	}
	slices.SortFunc(entries, func(a, b lockEntry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// withoutVersionMeta returns the version a listed tool's _meta names, and
// removes mcpkit's version keys from it: which other versions of a tool
// are registered is not part of this version's definition.
func withoutVersionMeta(listed *mcp.Tool) string {
	v, _ := listed.Meta[mcpkit.MetaKeyVersion].(string)
	if listed.Meta != nil {
		m := maps.Clone(listed.Meta)
		delete(m, mcpkit.MetaKeyVersion)
		delete(m, mcpkit.MetaKeyVersions)
		if len(m) == 0 {
			m = nil
		}
		listed.Meta = m
	}
	return v
}

// readLock reads and checks the lockfile at path.
func readLock(path string) ([]lockEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lf lockFile
	if err := json.Unmarshal(data, &lf); err != nil {
		return nil, fmt.Errorf("not a lockfile: %v", err)
	}
	if lf.LockVersion != lockVersion {
		return nil, fmt.Errorf("lockVersion %d, want %d", lf.LockVersion, lockVersion)
	}
	seen := make(map[string]bool, len(lf.Tools))
	for i, e := range lf.Tools {
		if seen[e.Name] {
			return nil, fmt.Errorf("tool %q appears twice", e.Name)
		}
		seen[e.Name] = true
		canon, err := defdiff.Definition(e.Definition)
		if err != nil {
			return nil, fmt.Errorf("tool %q: definition: %v", e.Name, err)
		}
		if defdiff.Fingerprint(canon) != e.Fingerprint {
			return nil, fmt.Errorf("tool %q: the fingerprint does not match the definition (was the file edited by hand?)", e.Name)
		}
		lf.Tools[i].Definition = canon
	}
	return lf.Tools, nil
}

// writeLock writes entries to the lockfile at path, atomically, unless it
// already holds them, and reports whether it wrote.
func writeLock(path string, entries []lockEntry) (bool, error) {
	if entries == nil {
		entries = []lockEntry{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(lockFile{LockVersion: lockVersion, Tools: entries}); err != nil {
		return false, err
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, buf.Bytes()) {
		return false, nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return false, err
	}
	return true, nil
}

// A finding is what checkLock has to say about one tool.
type finding struct {
	fail    bool     // the check fails; otherwise the lockfile is only out of date
	what    string   // what happened
	todo    string   // what to do about it
	changes []Change // the changes to the definition, if any
}

// report returns the finding as a message, with what to do about it
// (advice) or without.
func (f finding) report(advice bool) string {
	var b strings.Builder
	b.WriteString(f.what)
	if advice {
		b.WriteString("; ")
		b.WriteString(f.todo)
	}
	for _, c := range f.changes {
		b.WriteString("\n\t")
		b.WriteString(c.String())
		if c.Old != "" {
			fmt.Fprintf(&b, "\n\t\told: %s", defdiff.Clip(c.Old, maxValue))
		}
		if c.New != "" {
			fmt.Fprintf(&b, "\n\t\tnew: %s", defdiff.Clip(c.New, maxValue))
		}
	}
	return b.String()
}

// maxValue bounds the old and new values that a report quotes.
const maxValue = 200

// recordAdvice is the advice for a change that is fine once recorded.
const recordAdvice = "record it: " + UpdateLockEnv + "=1 go test"

// checkLock compares the locked entries with the current ones, tool by
// tool in name order, and returns what it finds.
func checkLock(locked, current []lockEntry) []finding {
	byName := func(es []lockEntry) map[string]lockEntry {
		m := make(map[string]lockEntry, len(es))
		for _, e := range es {
			m[e.Name] = e
		}
		return m
	}
	was, is := byName(locked), byName(current)
	names := make([]string, 0, len(was)+len(is))
	for n := range was {
		names = append(names, n)
	}
	for n := range is {
		if _, ok := was[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)

	var out []finding
	for _, name := range names {
		old, hadOld := was[name]
		cur, hasCur := is[name]
		switch {
		case !hasCur:
			out = append(out, finding{fail: true,
				what: fmt.Sprintf("tool %q (version %q) was removed, which breaks its clients", name, old.Version),
				todo: "if that is intended, " + recordAdvice})
		case !hadOld:
			out = append(out, finding{fail: true,
				what: fmt.Sprintf("tool %q (version %q) is not in the lockfile", name, cur.Version),
				todo: recordAdvice})
		default:
			if f, ok := checkTool(old, cur); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// checkTool applies the version rule to one tool, and reports whether
// there is anything to say.
func checkTool(old, cur lockEntry) (finding, bool) {
	sameDef := old.Fingerprint == cur.Fingerprint
	if sameDef && old.Version == cur.Version {
		return finding{}, false
	}
	f := finding{fail: true, changes: changes(defdiff.Compare(old.Definition, cur.Definition))}
	breaking := slices.ContainsFunc(f.changes, func(c Change) bool { return c.Breaking })
	switch {
	case version.Compare(cur.Version, old.Version) < 0:
		f.what = fmt.Sprintf("tool %q: version %q is lower than the locked %q", cur.Name, cur.Version, old.Version)
		f.todo = "versions only go up"
	case !sameDef && version.Compare(cur.Version, old.Version) == 0:
		f.what = fmt.Sprintf("tool %q: the definition changed but its version %q did not", cur.Name, cur.Version)
		f.todo = "bump the version (the major version for a breaking change), then " + recordAdvice
	case breaking && version.Compare(major(cur.Version), major(old.Version)) == 0:
		f.what = fmt.Sprintf("tool %q: breaking changes need a new major version, and %q to %q keeps major version %q", cur.Name, old.Version, cur.Version, major(cur.Version))
		f.todo = "bump the major version, then " + recordAdvice
	default:
		f.fail = false
		what := "no change to the definition"
		if !sameDef {
			what = plural(len(f.changes), "change")
		}
		f.what = fmt.Sprintf("tool %q: version %q to %q, %s", cur.Name, old.Version, cur.Version, what)
		f.todo = "the lockfile is out of date: " + recordAdvice
	}
	return f, true
}

// plural returns n and word, in the plural unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// major returns the major component of a tool version: what comes before
// the first dot, without a leading "v".
func major(v string) string {
	m, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	return m
}
