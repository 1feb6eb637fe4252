package mcpkittest

import (
	"testing"

	"github.com/mcpkit/mcpkit/internal/defdiff"
)

// TestChangeKinds checks that each kind of change defdiff reports is the
// ChangeKind of the same name, which changes() relies on.
func TestChangeKinds(t *testing.T) {
	for _, k := range []struct {
		ours   ChangeKind
		theirs defdiff.Kind
	}{
		{ToolAdded, defdiff.ToolAdded},
		{ToolRemoved, defdiff.ToolRemoved},
		{ToolRenamed, defdiff.ToolRenamed},
		{MetadataChanged, defdiff.MetadataChanged},
		{HintChanged, defdiff.HintChanged},
		{PropertyAdded, defdiff.PropertyAdded},
		{PropertyRemoved, defdiff.PropertyRemoved},
		{RequiredAdded, defdiff.RequiredAdded},
		{RequiredRemoved, defdiff.RequiredRemoved},
		{TypeNarrowed, defdiff.TypeNarrowed},
		{TypeWidened, defdiff.TypeWidened},
		{TypeChanged, defdiff.TypeChanged},
		{EnumNarrowed, defdiff.EnumNarrowed},
		{EnumWidened, defdiff.EnumWidened},
		{EnumChanged, defdiff.EnumChanged},
		{ConstraintTightened, defdiff.ConstraintTightened},
		{ConstraintLoosened, defdiff.ConstraintLoosened},
		{ConstraintChanged, defdiff.ConstraintChanged},
		{DefaultChanged, defdiff.DefaultChanged},
		{SchemaAdded, defdiff.SchemaAdded},
		{SchemaRemoved, defdiff.SchemaRemoved},
		{Equivalent, defdiff.Equivalent},
		{Unclassified, defdiff.Unclassified},
	} {
		if string(k.ours) != string(k.theirs) {
			t.Errorf("ChangeKind %q, defdiff.Kind %q", k.ours, k.theirs)
		}
	}
}
