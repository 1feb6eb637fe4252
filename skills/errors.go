package skills

import (
	"errors"
	"fmt"
)

// Errors that [FromFS], [New] and [File.Open] wrap; test with [errors.Is].
var (
	// ErrInvalidName: a skill's frontmatter has no name, a name that breaks
	// the Agent Skills naming rules, or a name that is not the skill's
	// directory name.
	ErrInvalidName = errors.New("skills: invalid skill name")

	// ErrFrontmatter: a SKILL.md does not begin with YAML frontmatter, the
	// frontmatter does not parse or has no JSON rendering, or a field
	// breaks the Agent Skills format (description missing, empty or too
	// long, and so on).
	ErrFrontmatter = errors.New("skills: invalid SKILL.md frontmatter")

	// ErrLimit: a skill has more than [MaxFiles] files or more than
	// [MaxBytes] bytes.
	ErrLimit = errors.New("skills: skill exceeds the extension's limits")

	// ErrPath: a path that cannot be served: a symbolic link or other
	// irregular file inside a skill, a name that escapes its directory
	// ("..", a slash), a SKILL.md at the root, two files at one path, or an
	// invalid prefix.
	ErrPath = errors.New("skills: invalid path")

	// ErrChanged: a file's bytes are not those whose size and digest the set
	// published (the file changed on disk after loading).
	ErrChanged = errors.New("skills: file changed since the skill was loaded")
)

// A loadError is a refusal of one of the kinds above, with what was refused.
type loadError struct {
	kind error
	msg  string
}

func (e *loadError) Error() string { return e.kind.Error() + ": " + e.msg }
func (e *loadError) Unwrap() error { return e.kind }

func fail(kind error, format string, args ...any) error {
	return &loadError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// within returns err with context (a skill, a Def) put before its message,
// after its kind.
func within(context string, err error) error {
	var le *loadError
	if errors.As(err, &le) {
		return &loadError{kind: le.kind, msg: context + ": " + le.msg}
	}
	return fmt.Errorf("skills: %s: %w", context, err)
}
