package portable

import (
	"encoding/json"
	"testing"
)

func TestPlanApply(t *testing.T) {
	for _, tt := range []struct {
		name, schema, args, want string
	}{
		{
			name:   "nested objects and arrays",
			schema: `{"type":"object","properties":{"a":{"type":"string"},"n":{"type":"object","properties":{"x":{"type":"string"}}},"l":{"type":"array","items":{"type":"object","properties":{"z":{"type":"boolean"}}}}}}`,
			args:   `{"a":null,"n":{"x":null},"l":[{"z":null},{"z":true}]}`,
			want:   `{"n":{},"l":[{},{"z":true}]}`,
		},
		{
			name:   "an object that is null itself",
			schema: `{"type":"object","properties":{"n":{"type":"object","properties":{"x":{"type":"string"}}},"k":{"type":"string"}},"required":["k"]}`,
			args:   `{"n":null,"k":"v"}`,
			want:   `{"k":"v"}`,
		},
		{
			name:   "a null the original admits stays",
			schema: `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"string"}}}`,
			args:   `{"a":null,"b":null}`,
			want:   `{"a":null}`,
		},
		{
			name:   "required stays",
			schema: `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"string"}},"required":["a"]}`,
			args:   `{"b":"x","a":null}`,
			want:   `{"b":"x","a":null}`,
		},
		{
			name:   "alternatives that disagree keep the null",
			schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"object","properties":{"k":{"type":"string"},"only":{"type":"integer"}}},{"type":"object","properties":{"k":{"type":["string","null"]}}}]}},"required":["v"]}`,
			args:   `{"v":{"k":null,"only":null}}`,
			want:   `{"v":{"k":null}}`,
		},
		{
			name:   "recursion",
			schema: `{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`,
			args:   `{"name":"a","kids":[{"name":"b","kids":null},{"name":"c","kids":[{"name":"d","kids":null}]}]}`,
			want:   `{"name":"a","kids":[{"name":"b"},{"name":"c","kids":[{"name":"d"}]}]}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Rewrite([]byte(tt.schema), OpenAIStrict, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Plan == nil {
				t.Fatal("no plan")
			}
			in := []byte(tt.args)
			if got := res.Plan.Apply(in); string(got) != tt.want {
				t.Errorf("Apply(%s) = %s, want %s", tt.args, got, tt.want)
			}
			if string(in) != tt.args {
				t.Error("Apply changed its input")
			}
		})
	}
}

func TestPlanApplyUnchanged(t *testing.T) {
	res, err := Rewrite([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), OpenAIStrict, nil)
	if err != nil || res.Plan == nil {
		t.Fatal(res, err)
	}
	for _, args := range []string{`{"a":"x"}`, `{"a":"null"}`, `not json null`, `[null]`, ``, `null`} {
		in := []byte(args)
		if got := res.Plan.Apply(in); string(got) != args || len(in) > 0 && &got[0] != &in[0] {
			t.Errorf("Apply(%q) = %q, want its input", args, got)
		}
	}
	var none *Plan
	if got := none.Apply([]byte(`{"a":null}`)); string(got) != `{"a":null}` {
		t.Errorf("a nil Plan changed the arguments: %s", got)
	}
}

func TestPlanAllocs(t *testing.T) {
	res, err := Rewrite([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), OpenAIStrict, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"a":"x","b":[1,2,{"c":true}]}`)
	if n := testing.AllocsPerRun(100, func() { res.Plan.Apply(args) }); n != 0 {
		t.Errorf("Apply allocates %v times for arguments without null", n)
	}
}

// Removing members keeps the separators right, whatever the spacing.
func TestPlanApplySeparators(t *testing.T) {
	res, err := Rewrite([]byte(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"n":{"type":"object","properties":{"x":{"type":"string"}}}}}`), OpenAIStrict, nil)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"a":null,"b":null,"c":null}`:                `{}`,
		`{"a":"1","b":null,"c":null}`:                 `{"a":"1"}`,
		`{"a":null,"b":"2","c":null}`:                 `{"b":"2"}`,
		`{"a":null,"b":null,"c":"3"}`:                 `{"c":"3"}`,
		`{"a":"1","b":null,"c":"3"}`:                  `{"a":"1","c":"3"}`,
		` { "a" : null , "b" : "2" , "c" : null } `:   ` { "b" : "2" } `,
		"{\n \"a\": \"1\",\n \"b\": null\n}":          "{\n \"a\": \"1\"\n}",
		`{"n":{"x":null},"a":null,"c":"null"}`:        `{"n":{},"c":"null"}`,
		`{"n":null}`:                                  `{}`,
		`{"n":{"x":"v","y":null},"a":"x,y","b":null}`: `{"n":{"x":"v","y":null},"a":"x,y"}`,
		`{"\u0061":null,"b":"\"null\""}`:              `{"b":"\"null\""}`,
	} {
		got := res.Plan.Apply([]byte(args))
		if string(got) != want {
			t.Errorf("Apply(%s) = %s, want %s", args, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("Apply(%s) = %s, not JSON", args, got)
		}
	}
}
