package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/schemas")

type Basic struct {
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	Enabled bool    `json:"enabled"`
	Ratio   float64 `json:"ratio"`
}

type Optional struct {
	Required string  `json:"required"`
	Omitted  string  `json:"omitted,omitempty"`
	Zero     int     `json:"zero,omitzero"`
	Pointer  *string `json:"pointer"`
	Override *int    `json:"override" required:"true"`
	Demoted  string  `json:"demoted" required:"false"`
}

type Documented struct {
	Query string `json:"query" description:"What to search for." title:"Query"`
	Limit int    `json:"limit" jsonschema:"How many results to return."`
}

type Defaults struct {
	Limit  int      `json:"limit" default:"10" minimum:"1" maximum:"100"`
	Sort   string   `json:"sort" default:"relevance" enum:"relevance,date"`
	Fields []string `json:"fields" default:"[\"id\",\"name\"]"`
}

type Enums struct {
	Color  string   `json:"color" enum:"red, green, blue"`
	Level  int      `json:"level" enum:"1,2,3"`
	Labels []string `json:"labels" enum:"bug,feature" uniqueItems:"true" maxItems:"2"`
}

type Numbers struct {
	Price float64 `json:"price" exclusiveMinimum:"0" multipleOf:"0.01"`
	Score int     `json:"score" minimum:"-5" exclusiveMaximum:"5"`
	Small int8    `json:"small"`
	Byte  uint8   `json:"byte"`
	Count uint    `json:"count"`
	Wide  uint32  `json:"wide"`
}

type Strings struct {
	Code  string `json:"code" minLength:"3" maxLength:"3" pattern:"^[A-Z]+$"`
	Email string `json:"email" format:"email"`
}

type Address struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

type Nested struct {
	Home Address  `json:"home"`
	Work *Address `json:"work,omitempty"`
}

type Audit struct {
	CreatedBy string `json:"createdBy"`
	Note      string `json:"note,omitempty"`
}

type Embedded struct {
	Audit
	ID string `json:"id"`
}

type Left struct{ Name, Left string }
type Right struct{ Name, Right string }

type EmbeddedConflict struct {
	*Left
	Right
	Tagged struct {
		X int `json:"x"`
	} `json:"tagged"`
}

type Lists struct {
	Tags   []string  `json:"tags"`
	People []Address `json:"people"`
	Triple [3]int    `json:"triple"`
	Matrix [][]int   `json:"matrix,omitempty"`
}

type Maps struct {
	Counts map[string]int      `json:"counts"`
	ByID   map[int]Address     `json:"byId,omitempty"`
	Any    map[string]any      `json:"any,omitempty"`
	Nested map[string][]string `json:"nested,omitempty"`
}

type Times struct {
	At      time.Time     `json:"at"`
	Timeout time.Duration `json:"timeout" description:"How long to wait, in nanoseconds."`
	Every   time.Duration `json:"every,omitempty"`
}

type Raw struct {
	Payload json.RawMessage `json:"payload"`
	Blob    []byte          `json:"blob"`
	Value   any             `json:"value,omitempty"`
	Number  json.Number     `json:"number,omitempty"`
}

// Priority describes itself.
type Priority int

func (Priority) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: []any{"low", "high"}}
}

type Custom struct {
	Priority Priority      `json:"priority"`
	Pointer  *Priority     `json:"pointer,omitempty"`
	Addr     netip.Addr    `json:"addr"`
	Level    jsonTextLevel `json:"level"`
}

type jsonTextLevel int

func (l *jsonTextLevel) UnmarshalText([]byte) error  { return nil }
func (l jsonTextLevel) MarshalText() ([]byte, error) { return nil, nil }

type Tree struct {
	Value    int     `json:"value"`
	Children []*Tree `json:"children,omitempty"`
}

type Forest struct {
	Name  string `json:"name"`
	Trees []Tree `json:"trees"`
}

type Person struct {
	Name    string  `json:"name"`
	Manager *Person `json:"manager,omitempty"`
	Team    *Team   `json:"team,omitempty"`
}

type Team struct {
	Lead    Person   `json:"lead"`
	Members []Person `json:"members"`
}

type Skipped struct {
	Kept     string `json:"kept"`
	Dash     string `json:"-"`
	private  string //lint:ignore U1000 an unexported field, which schemas skip
	Untagged string
	Quoted   int  `json:"quoted,string"`
	QBool    bool `json:",string"`
}

type Nullable struct {
	Maybe []string `json:"maybe" nullable:"true"`
	Name  *string  `json:"name" nullable:"true"`
}

type Generic[T any] struct {
	Items []T         `json:"items"`
	Next  *Generic[T] `json:"next,omitempty"`
}

type OutputShape struct {
	Title string            `json:"title"`
	Tags  []string          `json:"tags"`
	Meta  map[string]string `json:"meta"`
	Next  *Address          `json:"next"`
	Note  *string           `json:"note,omitempty"`
}

type unexported struct{ X int }

type WithTime struct {
	Deadline time.Time `json:"deadline" format:"date-time" description:"When it is due."`
}

var schemaCases = []struct {
	name   string
	typ    reflect.Type
	output bool
	types  map[reflect.Type]*jsonschema.Schema
}{
	{name: "basic", typ: reflect.TypeFor[Basic]()},
	{name: "optional", typ: reflect.TypeFor[Optional]()},
	{name: "documented", typ: reflect.TypeFor[Documented]()},
	{name: "defaults", typ: reflect.TypeFor[Defaults]()},
	{name: "enums", typ: reflect.TypeFor[Enums]()},
	{name: "numbers", typ: reflect.TypeFor[Numbers]()},
	{name: "strings", typ: reflect.TypeFor[Strings]()},
	{name: "nested", typ: reflect.TypeFor[Nested]()},
	{name: "embedded", typ: reflect.TypeFor[Embedded]()},
	{name: "embedded_conflict", typ: reflect.TypeFor[EmbeddedConflict]()},
	{name: "lists", typ: reflect.TypeFor[Lists]()},
	{name: "maps", typ: reflect.TypeFor[Maps]()},
	{name: "times", typ: reflect.TypeFor[Times]()},
	{name: "raw", typ: reflect.TypeFor[Raw]()},
	{name: "custom", typ: reflect.TypeFor[Custom]()},
	{name: "tree", typ: reflect.TypeFor[Tree]()},
	{name: "forest", typ: reflect.TypeFor[Forest]()},
	{name: "mutual_recursion", typ: reflect.TypeFor[Person]()},
	{name: "skipped", typ: reflect.TypeFor[Skipped]()},
	{name: "nullable", typ: reflect.TypeFor[Nullable]()},
	{name: "generic_recursive", typ: reflect.TypeFor[Generic[string]]()},
	{name: "pointer_root", typ: reflect.TypeFor[*Basic]()},
	{name: "map_root", typ: reflect.TypeFor[map[string]float64]()},
	{name: "with_time", typ: reflect.TypeFor[WithTime]()},
	{name: "type_schemas", typ: reflect.TypeFor[Custom](), types: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[netip.Addr](): {Type: "string", Format: "ipv4"},
	}},
	{name: "out_object", typ: reflect.TypeFor[OutputShape](), output: true},
	{name: "out_tree", typ: reflect.TypeFor[Tree](), output: true},
	{name: "out_int", typ: reflect.TypeFor[int](), output: true},
	{name: "out_string", typ: reflect.TypeFor[string](), output: true},
	{name: "out_list", typ: reflect.TypeFor[[]Address](), output: true},
	{name: "out_list_of_trees", typ: reflect.TypeFor[[]Tree](), output: true},
	{name: "out_pointer", typ: reflect.TypeFor[*Address](), output: true},
	{name: "out_map", typ: reflect.TypeFor[map[string]int](), output: true},
}

func TestSchemaGolden(t *testing.T) {
	for _, tc := range schemaCases {
		t.Run(tc.name, func(t *testing.T) {
			opts := &Options{TypeSchemas: tc.types}
			var (
				s   any
				err error
			)
			if tc.output {
				s, err = outputSchema(tc.typ, opts)
			} else {
				s, err = inputSchema(tc.typ, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "schemas", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("schema differs from %s:\ngot:\n%s", path, got)
			}
			checkSchema(t, got, !tc.output)
		})
	}
}

// checkSchema checks that a generated schema resolves with jsonschema-go,
// that every $ref in it points into its own $defs, and, for input schemas,
// that it uses no type lists (which some clients reject) unless a field
// asked to be nullable.
func checkSchema(t *testing.T, data []byte, input bool) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(nil); err != nil {
		t.Fatalf("does not resolve: %v", err)
	}
	var doc map[string]any
	json.Unmarshal(data, &doc)
	defs, _ := doc["$defs"].(map[string]any)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name, ok := strings.CutPrefix(ref, "#/$defs/")
				if _, found := defs[name]; !ok || !found {
					t.Errorf("%s: $ref %q does not resolve within the schema", path, ref)
				}
			}
			if types, ok := v["type"].([]any); ok && input && !strings.Contains(path, "maybe") && !strings.Contains(path, "name") {
				t.Errorf("%s: input schema uses a type list %v", path, types)
			}
			for k, x := range v {
				walk(path+"/"+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"/[]", x)
			}
		}
	}
	walk("", doc)
	if input && doc["type"] != "object" {
		t.Errorf("input schema root type = %v, want object", doc["type"])
	}
}

func TestSchemaErrors(t *testing.T) {
	type badMapKey struct {
		M map[[2]int]string `json:"m"`
	}
	type badFunc struct {
		F func() `json:"f"`
	}
	type badChan struct {
		C chan int `json:"c"`
	}
	type badDefault struct {
		N int `json:"n" default:"ten"`
	}
	type badEnum struct {
		N int `json:"n" enum:"1,two"`
	}
	type badMinimum struct {
		N int `json:"n" minimum:"low"`
	}
	type badPattern struct {
		S string `json:"s" pattern:"(["`
	}
	type badLength struct {
		S string `json:"s" minLength:"-1"`
	}
	type badBool struct {
		S []string `json:"s" uniqueItems:"yes"`
	}
	type customJSON struct {
		T customMarshal `json:"t"`
	}
	type typoMinimum struct {
		N int `json:"n" mininum:"1"`
	}
	type typoDescription struct {
		N int `json:"n" descripton:"A number."`
	}
	type typoJSONKey struct {
		N int `jsn:"n"`
	}
	type typoJSONOption struct {
		//lint:ignore SA5008 the misspelt option is what the test is about
		N int `json:"n,omitempy"`
	}
	type unknownJSONOption struct {
		//lint:ignore SA5008 the unknown option is what the test is about
		N int `json:"n,sometimes"`
	}
	type otherLibraries struct {
		N int `json:"n" yaml:"n" db:"n" validate:"min=1" form:"n" env:"N" bson:"n"`
		M int `json:"m,omitempty,format:int" x-note:"kept"`
	}
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"map key", reflect.TypeFor[badMapKey](), "map key type"},
		{"func", reflect.TypeFor[badFunc](), "has no JSON form"},
		{"chan", reflect.TypeFor[badChan](), "has no JSON form"},
		{"default", reflect.TypeFor[badDefault](), `default: "ten" is not an integer`},
		{"enum", reflect.TypeFor[badEnum](), `enum: "two" is not an integer`},
		{"minimum", reflect.TypeFor[badMinimum](), "minimum"},
		{"pattern", reflect.TypeFor[badPattern](), "pattern"},
		{"length", reflect.TypeFor[badLength](), "minLength"},
		{"bool", reflect.TypeFor[badBool](), "uniqueItems"},
		{"custom JSON", reflect.TypeFor[customJSON](), "JSONSchema"},
		{"tag typo", reflect.TypeFor[typoMinimum](), `field tools.typoMinimum.N: tag key "mininum" is not one tools.New reads: did you mean "minimum"?`},
		{"tag typo description", reflect.TypeFor[typoDescription](), `tag key "descripton" is not one tools.New reads: did you mean "description"?`},
		{"json key typo", reflect.TypeFor[typoJSONKey](), `tag key "jsn" is not one tools.New reads: did you mean "json"?`},
		{"json option typo", reflect.TypeFor[typoJSONOption](), `json tag option "omitempy" is not one encoding/json knows: did you mean "omitempty"?`},
		{"json option unknown", reflect.TypeFor[unknownJSONOption](), `json tag option "sometimes" is not one encoding/json knows`},
		{"other libraries' tags", reflect.TypeFor[otherLibraries](), ""},
		{"not an object", reflect.TypeFor[int](), "not a struct or map"},
		{"list", reflect.TypeFor[[]Basic](), "not a struct or map"},
		{"unexported", reflect.TypeFor[unexported](), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := inputSchema(tt.typ, &Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

// TestSchemaTagTyposAllAtOnce checks that every misspelt tag of a type is
// reported by one call, each naming its field, so that a struct with
// several typos is fixed in one run.
func TestSchemaTagTyposAllAtOnce(t *testing.T) {
	type inner struct {
		Q string `json:"q" descripton:"A query."`
	}
	type typos struct {
		N int    `json:"n" mininum:"1" maxinum:"9"`
		S string `json:"s" patern:"^a"`
		//lint:ignore SA5008 the misspelt option is what the test is about
		M     int   `json:"m,omitempy"`
		Inner inner `json:"inner"`
		Again inner `json:"again"`
		Fine  int   `json:"fine" minimum:"0"`
	}
	_, err := New("typos", func(context.Context, typos) (string, error) { return "", nil }, nil)
	if err == nil {
		t.Fatal("New accepted misspelt tags")
	}
	want := []string{
		`field tools.typos.N: tag key "mininum" is not one tools.New reads: did you mean "minimum"?`,
		`field tools.typos.N: tag key "maxinum" is not one tools.New reads: did you mean "maximum"?`,
		`field tools.typos.S: tag key "patern" is not one tools.New reads: did you mean "pattern"?`,
		`field tools.typos.M: json tag option "omitempy" is not one encoding/json knows: did you mean "omitempty"?`,
		`field tools.inner.Q: tag key "descripton" is not one tools.New reads: did you mean "description"?`,
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if n := strings.Count(err.Error(), "descripton"); n != 1 {
		t.Errorf("the typo of a type used twice is reported %d times, want once:\n%v", n, err)
	}
	if strings.Contains(err.Error(), "Fine") {
		t.Errorf("a well-spelt field is reported:\n%v", err)
	}
}

type customMarshal struct{ v int } //lint:ignore U1000 the value is never marshalled

func (c customMarshal) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }
func (c *customMarshal) UnmarshalJSON([]byte) error  { return nil }

// TestSchemaDoesNotMutateOverrides checks that the schemas given by
// Schemaer and TypeSchemas are copied, not changed, when a field adds to
// them.
func TestSchemaDoesNotMutateOverrides(t *testing.T) {
	shared := &jsonschema.Schema{Type: "string"}
	type withTags struct {
		A netip.Addr `json:"a" description:"changed" nullable:"true"`
	}
	if _, err := inputSchema(reflect.TypeFor[withTags](), &Options{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[netip.Addr](): shared,
	}}); err != nil {
		t.Fatal(err)
	}
	if shared.Description != "" || shared.Type != "string" || shared.Types != nil {
		t.Errorf("override mutated: %+v", shared)
	}
}
