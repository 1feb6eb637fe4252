package portable

import (
	"strings"
	"testing"
)

// problem is an expected problem: its pointer and a part of its rule.
type problem struct{ ptr, rule string }

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema string
		want   map[Profile][]problem
	}{
		{
			name:   "what the go-sdk and the C# SDK write for nullable fields",
			schema: `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"array","items":{"type":["integer","null"]}}},"required":["a"],"additionalProperties":false}`,
			want: map[Profile][]problem{
				AllProviders: {{"/properties/a/type", `"type" is a list`}, {"/properties/b/items/type", `"type" is a list`}, {"/additionalProperties", `does not take "additionalProperties"`}},
				Gemini:       {{"/properties/a/type", "nullable: true admits null"}, {"/properties/b/items/type", `"type" is a list`}, {"/additionalProperties", `does not take "additionalProperties"`}},
				OpenAIStrict: {{"", "not required: b"}},
			},
		},
		{
			name:   "anyOf inside items, arrays without items, boolean schemas, properties on non-objects",
			schema: `{"type":"object","properties":{"x":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"y":{"type":"array"},"z":true,"w":{"type":"string","properties":{"q":{"type":"string"}}}}}`,
			want: map[Profile][]problem{
				Gemini: {
					{"/properties/x/items/anyOf", "anyOf directly inside items"},
					{"/properties/y", "an array must say what its items are"},
					{"/properties/z", "a schema must be a JSON object"},
					{"/properties/w/properties", `takes "properties" only on object, not on string`},
				},
				OpenAIStrict: {
					{"/properties/y", "an array must say what its items are"},
					{"/properties/z", "a schema must be a JSON object"},
					{"/properties/w/properties", `takes "properties" only on object`},
					{"", "every object must have additionalProperties: false"},
					{"", "not required: x, y, z, w"},
				},
			},
		},
		{
			name:   "references, formats and siblings of anyOf",
			schema: `{"type":"object","$defs":{"d":{"type":"string","format":"uuid"}},"properties":{"r":{"$ref":"#/$defs/d"},"o":{"description":"o","anyOf":[{"type":"string"},{"type":"null"}]},"f":{"type":"string","format":"email"},"bad name":{"type":"boolean"}}}`,
			want: map[Profile][]problem{
				AllProviders: {
					{"/$defs", "takes no $defs"},
					{"/properties/r/$ref", "takes no $ref"},
					{"/properties/o/description", `no "description" next to anyOf`},
					{"/properties/f/format", `format "email" on string`},
					{"/properties/bad name", `argument name "bad name"`},
				},
				OpenAIStrict: {
					{"", "every object must have additionalProperties"},
					{"", "not required"},
				},
			},
		},
		{
			name:   "what the rules of Gemini's Schema let through",
			schema: `{"type":"OBJECT","properties":{"s":{"type":"STRING","enum":["a"],"format":"date-time","minLength":1,"nullable":true},"n":{"type":"NUMBER","minimum":0},"o":{"anyOf":[{"type":"string"},{"type":"null"}]},"d":{"type":"integer","default":3,"example":4}},"required":["s"],"propertyOrdering":["s","n"]}`,
			want: map[Profile][]problem{
				Gemini: nil,
				AllProviders: {
					{"", `the root must have "type": "object"`},
					{"/type", `"OBJECT" is not a type`},
					{"/properties", `"properties" only on object, not on OBJECT`},
					{"/required", `"required" only on object, not on OBJECT`},
					{"/propertyOrdering", `does not take "propertyOrdering"`},
				},
			},
		},
		{
			name:   "Gemini: required names what properties do not, an empty object, an enum of numbers",
			schema: `{"type":"object","properties":{"e":{"type":"object"},"n":{"type":"integer","enum":[1,2]}},"required":["e","missing"]}`,
			want: map[Profile][]problem{
				Gemini: {{"/properties/e", "an object below the root must have properties"}, {"/properties/n/enum", `takes "enum" only on string, not on integer`}, {"/required", `required names "missing"`}},
			},
		},
		{
			name:   "OpenAI strict mode accepts its own idiom",
			schema: `{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x",null]},"l":{"$ref":"#/$defs/n"}},"required":["a","l"],"additionalProperties":false,"$defs":{"n":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"required":["next"],"additionalProperties":false}}}`,
			want: map[Profile][]problem{
				OpenAIStrict: nil,
				Gemini: {
					{"/properties/a/type", `"type" is a list`},
					{"/properties/a/enum", "only strings in enum, not null"},
					{"/properties/l/$ref", "takes no $ref"},
					{"/additionalProperties", "additionalProperties"},
					{"/$defs", "takes no $defs"},
				},
			},
		},
		{
			name:   "OpenAI strict mode: root anyOf",
			schema: `{"type":"object","anyOf":[{"type":"object"}],"properties":{"r":{"$ref":"#/definitions/x"}}}`,
			want: map[Profile][]problem{
				OpenAIStrict: {{"/anyOf", "the root must be an object schema, not anyOf"}, {"/type", `no "type" next to anyOf`}, {"/properties", `no "properties" next to anyOf`}, {"/anyOf/0", "additionalProperties"}},
			},
		},
		{
			name:   "not a schema",
			schema: `[]`,
			want:   map[Profile][]problem{Gemini: {{"", "a schema must be a JSON object"}}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for p, want := range tt.want {
				got := Check([]byte(tt.schema), p)
				if len(got) != len(want) {
					t.Errorf("%v: %d problems, want %d: %q", p, len(got), len(want), got)
					continue
				}
				for i, g := range got {
					if g.Pointer != want[i].ptr || !strings.Contains(g.Rule, want[i].rule) {
						t.Errorf("%v: problem %d is %q, want %q", p, i, g, want[i])
					}
				}
			}
		})
	}
}

func TestCheckLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 11 {
		b.WriteString(`"a":{"type":"object","properties":{`)
		_ = i
	}
	b.WriteString(`"x":{"type":"string"}`)
	for range 11 {
		b.WriteString(`},"required":["x"],"additionalProperties":false}`)
	}
	b.WriteString(`}}`)
	got := Check([]byte(b.String()), OpenAIStrict)
	if len(got) == 0 || !strings.Contains(got[0].Rule, "levels of nested objects") {
		t.Errorf("12 levels of objects: %q", got)
	}
}

func TestCheckName(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		portable, gemini, openai bool
	}{
		{"search", true, true, true},
		{"gh.search", false, true, false},
		{"gh-search_2", true, true, true},
		{"2fa", false, false, true},
		{strings.Repeat("a", 65), false, true, false},
	} {
		for p, ok := range map[Profile]bool{AllProviders: tt.portable, Gemini: tt.gemini, OpenAIStrict: tt.openai} {
			if got := CheckName(tt.name, p) == ""; got != ok {
				t.Errorf("CheckName(%q, %v) accepts: %v, want %v", tt.name, p, got, ok)
			}
		}
	}
}
