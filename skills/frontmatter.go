package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the Agent Skills format on frontmatter fields, in characters.
const (
	maxNameLen          = 64
	maxDescriptionLen   = 1024
	maxCompatibilityLen = 500
)

// Bounds on rendering a frontmatter as JSON, so that a small document full of
// aliases cannot expand into a huge one.
const (
	maxFrontmatterDepth = 64
	maxFrontmatterNodes = 100_000
	maxFrontmatterJSON  = 1 << 20
)

// frontmatter is a SKILL.md's frontmatter: the JSON rendering of its YAML
// mapping, keys in the order the author wrote them, and the two fields every
// skill has.
type frontmatter struct {
	json        json.RawMessage
	name        string
	description string
}

// splitFrontmatter returns the YAML text between the fences that open a
// SKILL.md: a first line "---" (after an optional UTF-8 byte order mark) and
// the next line that is "---", trailing blanks allowed. It fails when the file
// does not begin that way.
func splitFrontmatter(data []byte) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	rest, ok := cutLine(data, "---")
	if !ok {
		return nil, errors.New(`SKILL.md does not begin with a "---" line opening its YAML frontmatter`)
	}
	body := rest
	for off := 0; off < len(rest); {
		line := rest[off:]
		end := bytes.IndexByte(line, '\n')
		if end >= 0 {
			line = line[:end]
		}
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			return body[:max(off-1, 0)], nil
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return nil, errors.New(`SKILL.md's YAML frontmatter has no closing "---" line`)
}

// cutLine reports whether data's first line is exactly want (a CRLF ending
// allowed) and returns what follows that line.
func cutLine(data []byte, want string) ([]byte, bool) {
	end := bytes.IndexByte(data, '\n')
	if end < 0 {
		return nil, false
	}
	line := bytes.TrimSuffix(data[:end], []byte("\r"))
	if string(line) != want {
		return nil, false
	}
	return data[end+1:], true
}

// parseFrontmatter parses the frontmatter of a SKILL.md and checks the fields
// the Agent Skills format defines. The errors it returns wrap
// [ErrFrontmatter] or [ErrInvalidName].
func parseFrontmatter(data []byte) (fm *frontmatter, err error) {
	text, err := splitFrontmatter(data)
	if err != nil {
		return nil, fail(ErrFrontmatter, "%v", err)
	}
	root, err := decodeYAML(text)
	if err != nil {
		return nil, fail(ErrFrontmatter, "%v", err)
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(ErrFrontmatter, "the frontmatter is not a YAML mapping")
	}
	w := &jsonWriter{}
	if err := w.node(root, 0); err != nil {
		return nil, fail(ErrFrontmatter, "%v", err)
	}
	fm = &frontmatter{json: w.buf.Bytes()}
	if err := fm.check(root); err != nil {
		return nil, err
	}
	return fm, nil
}

// decodeYAML decodes a single YAML document. A panic in the decoder is turned
// into an error: frontmatter comes from files a server may not have written.
func decodeYAML(text []byte) (root *yaml.Node, err error) {
	defer func() {
		if v := recover(); v != nil {
			root, err = nil, fmt.Errorf("the YAML decoder failed: %v", v)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("the frontmatter is empty")
		}
		return nil, fmt.Errorf("invalid YAML: %v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, errors.New("the frontmatter holds more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("the frontmatter is empty")
	}
	return resolve(doc.Content[0]), nil
}

// check checks name, description and the optional fields the Agent Skills
// format constrains (compatibility, license, metadata, allowed-tools), and
// records name and description.
func (fm *frontmatter) check(root *yaml.Node) error {
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		fields[resolve(root.Content[i]).Value] = resolve(root.Content[i+1])
	}
	name, ok := fields["name"]
	if !ok {
		return fail(ErrInvalidName, "the frontmatter has no name")
	}
	if !isString(name) {
		return fail(ErrInvalidName, "the frontmatter's name is not a string")
	}
	if err := checkName(name.Value); err != nil {
		return err
	}
	fm.name = name.Value

	desc, ok := fields["description"]
	if !ok {
		return fail(ErrFrontmatter, "the frontmatter has no description")
	}
	if !isString(desc) {
		return fail(ErrFrontmatter, "the frontmatter's description is not a string")
	}
	if n := utf8.RuneCountInString(desc.Value); n == 0 || n > maxDescriptionLen {
		return fail(ErrFrontmatter, "the description has %d characters; 1 to %d are allowed", n, maxDescriptionLen)
	}
	fm.description = desc.Value

	if c, ok := fields["compatibility"]; ok {
		if !isString(c) {
			return fail(ErrFrontmatter, "compatibility is not a string")
		}
		if n := utf8.RuneCountInString(c.Value); n == 0 || n > maxCompatibilityLen {
			return fail(ErrFrontmatter, "compatibility has %d characters; 1 to %d are allowed", n, maxCompatibilityLen)
		}
	}
	if l, ok := fields["license"]; ok && !isString(l) {
		return fail(ErrFrontmatter, "license is not a string")
	}
	if m, ok := fields["metadata"]; ok && m.Kind != yaml.MappingNode {
		return fail(ErrFrontmatter, "metadata is not a mapping")
	}
	if t, ok := fields["allowed-tools"]; ok && !isString(t) {
		if t.Kind != yaml.SequenceNode {
			return fail(ErrFrontmatter, "allowed-tools is neither a string nor a list of strings")
		}
		for _, item := range t.Content {
			if !isString(resolve(item)) {
				return fail(ErrFrontmatter, "allowed-tools is neither a string nor a list of strings")
			}
		}
	}
	return nil
}

// checkName checks a skill name against the Agent Skills rules: 1 to 64
// characters, lowercase ASCII letters, digits and hyphens, no hyphen first,
// last or next to another. The error wraps [ErrInvalidName].
func checkName(name string) error {
	switch {
	case name == "":
		return fail(ErrInvalidName, "the name is empty")
	case len(name) > maxNameLen:
		return fail(ErrInvalidName, "%q is %d characters long; at most %d are allowed", clip(name), len(name), maxNameLen)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return fail(ErrInvalidName, "%q starts or ends with a hyphen", name)
	case strings.Contains(name, "--"):
		return fail(ErrInvalidName, "%q has two hyphens in a row", name)
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-') {
			return fail(ErrInvalidName, "%q has %q; only lowercase letters, digits and hyphens are allowed", name, r)
		}
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	for i := n; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "..."
		}
	}
	return "..."
}

// isString reports whether n is a scalar that YAML reads as a string.
func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < maxFrontmatterDepth; i++ {
		n = n.Alias
	}
	return n
}

// jsonWriter renders YAML nodes as JSON, keeping the order of mapping keys.
type jsonWriter struct {
	buf   bytes.Buffer
	nodes int
}

func (w *jsonWriter) node(n *yaml.Node, depth int) error {
	w.nodes++
	switch {
	case depth > maxFrontmatterDepth:
		return fmt.Errorf("the frontmatter is nested more than %d levels deep", maxFrontmatterDepth)
	case w.nodes > maxFrontmatterNodes || w.buf.Len() > maxFrontmatterJSON:
		return errors.New("the frontmatter is too large once its aliases are expanded")
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return errors.New("an alias names no anchor")
		}
		return w.node(n.Alias, depth+1)
	case yaml.MappingNode:
		return w.mapping(n, depth)
	case yaml.SequenceNode:
		w.buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.node(item, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return w.scalar(n)
	}
	return fmt.Errorf("unexpected YAML node kind %d", n.Kind)
}

func (w *jsonWriter) mapping(n *yaml.Node, depth int) error {
	if len(n.Content)%2 != 0 {
		return errors.New("a mapping has a key without a value")
	}
	seen := make(map[string]bool, len(n.Content)/2)
	w.buf.WriteByte('{')
	for i := 0; i < len(n.Content); i += 2 {
		key := resolve(n.Content[i])
		if key.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: a mapping key is not a scalar", key.Line)
		}
		// Parsers disagree on "<<" (YAML 1.1 merges, 1.2 does not), so a
		// frontmatter using it has no single verbatim JSON rendering.
		if key.ShortTag() == "!!merge" {
			return fmt.Errorf("line %d: merge keys (<<) are not supported", key.Line)
		}
		if seen[key.Value] {
			return fmt.Errorf("line %d: the key %q appears twice", key.Line, clip(key.Value))
		}
		seen[key.Value] = true
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.string(key.Value)
		w.buf.WriteByte(':')
		if err := w.node(n.Content[i+1], depth+1); err != nil {
			return err
		}
	}
	w.buf.WriteByte('}')
	return nil
}

func (w *jsonWriter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		w.buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		fmt.Fprint(&w.buf, b)
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			fmt.Fprint(&w.buf, i)
			return nil
		}
		var u uint64
		if err := n.Decode(&u); err != nil {
			return fmt.Errorf("line %d: the integer %s is out of range", n.Line, clip(n.Value))
		}
		fmt.Fprint(&w.buf, u)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %s has no JSON form", n.Line, clip(n.Value))
		}
		b, err := json.Marshal(f)
		if err != nil {
			return err
		}
		w.buf.Write(b)
	default:
		// Strings, and what JSON has no type for (timestamps, binary,
		// application tags), are kept as the text the author wrote.
		w.string(n.Value)
	}
	return nil
}

func (w *jsonWriter) string(s string) {
	b, _ := json.Marshal(s) // a string always marshals
	w.buf.Write(b)
}
