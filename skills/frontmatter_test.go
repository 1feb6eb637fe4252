package skills

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFrontmatterJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"order kept", "---\nname: a\ndescription: d\nz: 1\nb: 2\n---\n",
			`{"name":"a","description":"d","z":1,"b":2}`},
		{"scalars", "---\nname: a\ndescription: d\nt: true\nn: null\ne:\nf: 1.5\ni: -3\nh: 0x1F\no: 0o17\ns: 'true'\nq: \"1\"\n---\n",
			`{"name":"a","description":"d","t":true,"n":null,"e":null,"f":1.5,"i":-3,"h":31,"o":15,"s":"true","q":"1"}`},
		// YAML 1.2 core: yes/no/on/off are strings, as JavaScript's yaml reads them.
		{"no YAML 1.1 booleans", "---\nname: a\ndescription: d\ny: yes\nn: off\n---\n",
			`{"name":"a","description":"d","y":"yes","n":"off"}`},
		// JSON has no date or binary: the text written is kept.
		{"timestamp kept as written", "---\nname: a\ndescription: d\nat: 2026-09-13T10:00:00Z\nday: 2026-09-13\n---\n",
			`{"name":"a","description":"d","at":"2026-09-13T10:00:00Z","day":"2026-09-13"}`},
		{"nested", "---\nname: a\ndescription: d\nmetadata:\n  version: \"1.0\"\n  tags: [x, y]\nallowed-tools: Bash(git:*) Read\n---\n",
			`{"name":"a","description":"d","metadata":{"version":"1.0","tags":["x","y"]},"allowed-tools":"Bash(git:*) Read"}`},
		{"aliases expanded", "---\nname: a\ndescription: &d same\nsummary: *d\n---\n",
			`{"name":"a","description":"same","summary":"same"}`},
		// The line break before the closing fence belongs to the fence, as
		// in the conformance suite's reading of SKILL.md.
		{"block scalars", "---\nname: a\ndescription: >\n  one\n  two\n---\n",
			`{"name":"a","description":"one two"}`},
		{"integer beyond 64 bits is a float", "---\nname: a\ndescription: d\nx: 123456789012345678901234567890\n---\n",
			`{"name":"a","description":"d","x":1.2345678901234568e+29}`},
		{"html escaped but equal", "---\nname: a\ndescription: <b> & c\n---\n",
			`{"name":"a","description":"\u003cb\u003e \u0026 c"}`},
		{"BOM and CRLF", "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\nbody",
			`{"name":"a","description":"d"}`},
		{"closing fence with blanks, at EOF", "---\nname: a\ndescription: d\n--- \t",
			`{"name":"a","description":"d"}`},
		{"first fence wins", "---\nname: a\ndescription: d\n---\nx: 1\n---\n",
			`{"name":"a","description":"d"}`},
		{"---- is not a fence", "---\nname: a\ndescription: d\nx: |\n  ----\n---\n",
			`{"name":"a","description":"d","x":"----"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, err := parseFrontmatter([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(fm.json) != tc.want {
				t.Errorf("JSON:\n got %s\nwant %s", fm.json, tc.want)
			}
		})
	}
}

func TestFrontmatterRefused(t *testing.T) {
	bomb := "---\nname: a\ndescription: d\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	bomb += "---\n"
	for _, tc := range []struct {
		name, in string
		want     error
	}{
		// Parsers disagree on merge keys, so no verbatim rendering exists.
		{"merge key", "---\nname: a\ndescription: d\nbase: &b {x: 1}\nm:\n  <<: *b\n---\n", ErrFrontmatter},
		{"duplicate key", "---\nname: a\ndescription: d\nname: b\n---\n", ErrFrontmatter},
		{"infinity", "---\nname: a\ndescription: d\nx: .inf\n---\n", ErrFrontmatter},
		{"NaN", "---\nname: a\ndescription: d\nx: .nan\n---\n", ErrFrontmatter},
		{"not a mapping", "---\n- name\n---\n", ErrFrontmatter},
		{"empty", "---\n---\n", ErrFrontmatter},
		{"comment only", "---\n# nothing\n---\n", ErrFrontmatter},
		{"invalid YAML", "---\nname: [a\ndescription: d\n---\n", ErrFrontmatter},
		{"two documents", "---\nname: a\ndescription: d\n...\nx: 1\n---\n", ErrFrontmatter},
		{"complex key", "---\nname: a\ndescription: d\n? [x]\n: 1\n---\n", ErrFrontmatter},
		{"alias bomb", bomb, ErrFrontmatter},
		{"description not a string", "---\nname: a\ndescription: [d]\n---\n", ErrFrontmatter},
		{"description too long", "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\n", ErrFrontmatter},
		{"compatibility too long", "---\nname: a\ndescription: d\ncompatibility: " + strings.Repeat("x", 501) + "\n---\n", ErrFrontmatter},
		{"compatibility empty", "---\nname: a\ndescription: d\ncompatibility: ''\n---\n", ErrFrontmatter},
		{"license not a string", "---\nname: a\ndescription: d\nlicense: {x: 1}\n---\n", ErrFrontmatter},
		{"metadata not a mapping", "---\nname: a\ndescription: d\nmetadata: x\n---\n", ErrFrontmatter},
		{"allowed-tools a number", "---\nname: a\ndescription: d\nallowed-tools: 1\n---\n", ErrFrontmatter},
		{"allowed-tools list of maps", "---\nname: a\ndescription: d\nallowed-tools: [{x: 1}]\n---\n", ErrFrontmatter},
		{"name null", "---\nname:\ndescription: d\n---\n", ErrInvalidName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, err := parseFrontmatter([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("parseFrontmatter = %+v, %v; want %v", fm, err, tc.want)
			}
			if len(err.Error()) > 300 {
				t.Errorf("error is %d bytes: %.80s...", len(err.Error()), err)
			}
		})
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "pdf-processing", "x1", "1x", strings.Repeat("a", 64), "a-b-c"} {
		if err := checkName(ok); err != nil {
			t.Errorf("checkName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", "a-", "a--b", "A", "a_b", "a b", "a.b", "é", strings.Repeat("a", 65), "a/b"} {
		if err := checkName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("checkName(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
}

// FuzzFrontmatter feeds the SKILL.md parser arbitrary files. It must never
// panic, and what it accepts must be a JSON object whose name and description
// are the ones it reports, the name valid.
func FuzzFrontmatter(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := parseFrontmatter(data)
		if err != nil {
			if !errors.Is(err, ErrFrontmatter) && !errors.Is(err, ErrInvalidName) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(fm.json, &obj); err != nil {
			t.Fatalf("accepted frontmatter is not a JSON object: %v\n%s", err, fm.json)
		}
		if obj["name"] != fm.name || obj["description"] != fm.description {
			t.Fatalf("JSON name/description %v/%v, reported %q/%q", obj["name"], obj["description"], fm.name, fm.description)
		}
		if err := checkName(fm.name); err != nil {
			t.Fatalf("accepted an invalid name: %v", err)
		}
		if len(fm.json) > maxFrontmatterJSON+64<<10 {
			t.Fatalf("JSON of %d bytes", len(fm.json))
		}
	})
}
