package schema

import (
	"errors"
	"fmt"
	"testing"
)

func TestExplain(t *testing.T) {
	other := errors.New("boom")
	ve := &ValidationError{Issues: []Issue{{Path: "a", Message: "want string, got number"}}, Omitted: 2}
	for _, tt := range []struct {
		name        string
		err         error
		wantIssues  int
		wantOmitted int
		wantCause   string
	}{
		{"issues", fmt.Errorf("wrapped: %w", ve), 1, 2, ""},
		{"syntax", &SyntaxError{Offset: 7, Msg: "unexpected end"}, 0, 0, "not valid JSON at offset 7: unexpected end"},
		{"too complex", fmt.Errorf("x: %w", ErrTooComplex), 0, 0, "too complex to validate"},
		{"other", other, 0, 0, "boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			issues, omitted, cause := Explain(tt.err)
			if len(issues) != tt.wantIssues || omitted != tt.wantOmitted {
				t.Errorf("issues %v, omitted %d; want %d issues, %d omitted", issues, omitted, tt.wantIssues, tt.wantOmitted)
			}
			switch {
			case tt.wantCause == "" && cause != nil:
				t.Errorf("cause %v, want none", cause)
			case tt.wantCause != "" && (cause == nil || cause.Error() != tt.wantCause):
				t.Errorf("cause %v, want %q", cause, tt.wantCause)
			}
		})
	}
	if _, _, cause := Explain(other); cause != other {
		t.Errorf("another error is not kept as it is: %v", cause)
	}
}
