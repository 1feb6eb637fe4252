package deref

// A derefCase is a schema, the expected result of dereferencing it, and
// instances that tell the two apart from a wrong rewrite: accept must
// validate and reject must not, against the input and against the output.
type derefCase struct {
	name   string
	in     string
	want   string
	accept []string
	reject []string
}

// cases returns the table shared by the golden, equivalence and fuzz tests.
func cases() []derefCase {
	return []derefCase{
		{
			name: "defs inlined, unused dropped",
			in: `{"type":"object","properties":{"name":{"$ref":"#/$defs/Name"},"tags":{"type":"array","items":{"$ref":"#/$defs/Name"}}},
				"required":["name"],"$defs":{"Name":{"type":"string","minLength":1},"Unused":{"type":"null"}}}`,
			want: `{"type":"object","properties":{"name":{"type":"string","minLength":1},"tags":{"type":"array","items":{"type":"string","minLength":1}}},
				"required":["name"]}`,
			accept: []string{`{"name":"a","tags":["b"]}`},
			reject: []string{`{"name":""}`, `{"name":"a","tags":[""]}`, `{}`},
		},
		{
			name:   "definitions",
			in:     `{"type":"object","properties":{"n":{"$ref":"#/definitions/N"}},"definitions":{"N":{"type":"integer"}}}`,
			want:   `{"type":"object","properties":{"n":{"type":"integer"}}}`,
			accept: []string{`{"n":1}`},
			reject: []string{`{"n":"x"}`},
		},
		{
			name: "pointer escapes",
			in: `{"type":"object","properties":{"a/b":{"type":"integer"},"c~d":{"type":"string"},"e f":{"type":"boolean"},
				"x":{"$ref":"#/properties/a~1b"},"y":{"$ref":"#/properties/c~0d"},"z":{"$ref":"#/properties/e%20f"}}}`,
			want: `{"type":"object","properties":{"a/b":{"type":"integer"},"c~d":{"type":"string"},"e f":{"type":"boolean"},
				"x":{"type":"integer"},"y":{"type":"string"},"z":{"type":"boolean"}}}`,
			accept: []string{`{"x":1,"y":"s","z":true}`},
			reject: []string{`{"x":"s"}`, `{"y":1}`, `{"z":1}`},
		},
		{
			name:   "root self-reference stays",
			in:     `{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#"}}}`,
			want:   `{"type":"object","properties":{"name":{"type":"string"},"child":{"$ref":"#"}}}`,
			accept: []string{`{"child":{"child":{"name":"x"}}}`},
			reject: []string{`{"child":{"child":{"name":1}}}`},
		},
		{
			name:   "anchor",
			in:     `{"type":"object","properties":{"id":{"$ref":"#ident"}},"$defs":{"Ident":{"$anchor":"ident","type":"string","pattern":"^[a-z]+$"}}}`,
			want:   `{"type":"object","properties":{"id":{"type":"string","pattern":"^[a-z]+$"}}}`,
			accept: []string{`{"id":"abc"}`},
			reject: []string{`{"id":"A1"}`},
		},
		{
			name: "root is a $ref",
			in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/Args","description":"outer",
				"$defs":{"Args":{"type":"object","description":"inner","properties":{"q":{"type":"string"}},"required":["q"]}}}`,
			want: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"q":{"type":"string"}},
				"required":["q"],"description":"outer"}`,
			accept: []string{`{"q":"x"}`},
			reject: []string{`{}`, `{"q":1}`},
		},
		{
			name: "root $ref to a recursive definition is unrolled once",
			in:   `{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"value":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}}}}}`,
			want: `{"type":"object","properties":{"value":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}},
				"$defs":{"Node":{"type":"object","properties":{"value":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}}}}}`,
			accept: []string{`{"value":1,"next":{"value":2}}`},
			reject: []string{`{"next":{"next":{"value":"x"}}}`, `[]`},
		},
		{
			name:   "definition only the root used is dropped",
			in:     `{"$ref":"#/$defs/x","$defs":{"x":{"type":"object","properties":{"again":{"$ref":"#"}}}}}`,
			want:   `{"type":"object","properties":{"again":{"$ref":"#"}}}`,
			accept: []string{`{"again":{"again":{}}}`},
			reject: []string{`{"again":{"again":1}}`},
		},
		{
			name: "siblings merged, sibling annotations win",
			in: `{"type":"object","properties":{"s":{"$ref":"#/$defs/Short","minLength":2,"description":"outer"}},
				"$defs":{"Short":{"type":"string","maxLength":5,"description":"inner","title":"Short"}}}`,
			want:   `{"type":"object","properties":{"s":{"type":"string","maxLength":5,"title":"Short","minLength":2,"description":"outer"}}}`,
			accept: []string{`{"s":"abc"}`},
			reject: []string{`{"s":"a"}`, `{"s":"abcdef"}`, `{"s":1}`},
		},
		{
			name: "conflicting sibling makes allOf",
			in: `{"type":"object","properties":{"s":{"$ref":"#/$defs/Short","maxLength":3,"title":"outer"}},
				"$defs":{"Short":{"type":"string","maxLength":5,"title":"inner"}}}`,
			want:   `{"type":"object","properties":{"s":{"allOf":[{"type":"string","maxLength":5,"title":"inner"}],"maxLength":3,"title":"outer"}}}`,
			accept: []string{`{"s":"abc"}`},
			reject: []string{`{"s":"abcd"}`, `{"s":1}`},
		},
		{
			name: "equal keywords merge",
			in: `{"type":"object","properties":{"s":{"type":"string","$ref":"#/$defs/S","enum":["a","b"]}},
				"$defs":{"S":{"type":"string","enum":["a","b"],"minLength":1}}}`,
			want:   `{"type":"object","properties":{"s":{"type":"string","minLength":1,"enum":["a","b"]}}}`,
			accept: []string{`{"s":"a"}`},
			reject: []string{`{"s":"c"}`, `{"s":1}`},
		},
		{
			name: "additionalProperties does not gain neighbours",
			in: `{"type":"object","properties":{"p":{"$ref":"#/$defs/Closed","patternProperties":{"^b":{"type":"integer"}}}},
				"$defs":{"Closed":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}}`,
			want: `{"type":"object","properties":{"p":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}],
				"patternProperties":{"^b":{"type":"integer"}}}}}`,
			accept: []string{`{"p":{"a":"x"}}`},
			reject: []string{`{"p":{"b":1}}`, `{"p":{"a":1}}`},
		},
		{
			name: "unevaluatedProperties beside the $ref still sees the target",
			in: `{"type":"object","properties":{"p":{"$ref":"#/$defs/Base","properties":{"b":{}},"unevaluatedProperties":false}},
				"$defs":{"Base":{"properties":{"a":{}}}}}`,
			want:   `{"type":"object","properties":{"p":{"allOf":[{"properties":{"a":{}}}],"properties":{"b":{}},"unevaluatedProperties":false}}}`,
			accept: []string{`{"p":{"a":1,"b":2}}`},
			reject: []string{`{"p":{"c":1}}`},
		},
		{
			name: "target with unevaluatedProperties is not merged",
			in: `{"type":"object","properties":{"p":{"$ref":"#/$defs/Strict","patternProperties":{"^b":{}}}},
				"$defs":{"Strict":{"properties":{"a":{}},"unevaluatedProperties":false}}}`,
			want:   `{"type":"object","properties":{"p":{"allOf":[{"properties":{"a":{}},"unevaluatedProperties":false}],"patternProperties":{"^b":{}}}}}`,
			accept: []string{`{"p":{"a":1}}`},
			reject: []string{`{"p":{"b":1}}`},
		},
		{
			name: "existing allOf gets the target appended",
			in: `{"type":"object","properties":{"p":{"allOf":[{"minLength":1}],"$ref":"#/$defs/S","maxLength":2}},
				"$defs":{"S":{"type":"string","maxLength":5}}}`,
			want:   `{"type":"object","properties":{"p":{"allOf":[{"minLength":1},{"type":"string","maxLength":5}],"maxLength":2}}}`,
			accept: []string{`{"p":"ab"}`},
			reject: []string{`{"p":""}`, `{"p":"abc"}`, `{"p":1}`},
		},
		{
			name: "boolean targets",
			in: `{"type":"object","properties":{"t":{"$ref":"#/$defs/Any","description":"anything"},
				"f":{"$ref":"#/$defs/None","description":"nothing"},"g":{"$ref":"#/$defs/None"}},"$defs":{"Any":true,"None":false}}`,
			want:   `{"type":"object","properties":{"t":{"description":"anything"},"f":{"allOf":[false],"description":"nothing"},"g":false}}`,
			accept: []string{`{"t":[1]}`},
			reject: []string{`{"f":1}`, `{"g":null}`},
		},
		{
			name: "draft-07 ignores the siblings of $ref",
			in: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
				"properties":{"a":{"$ref":"#/definitions/S","maxLength":1,"description":"outer"}},"definitions":{"S":{"type":"string"}}}`,
			want:   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string","description":"outer"}}}`,
			accept: []string{`{"a":"long"}`},
			reject: []string{`{"a":1}`},
		},
		{
			name: "draft-07 root $ref",
			in: `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/Args","minProperties":5,
				"definitions":{"Args":{"type":"object","properties":{"id":{"$ref":"#/definitions/Id"}}},"Id":{"type":"integer"}}}`,
			want:   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"integer"}}}`,
			accept: []string{`{"id":1}`},
			reject: []string{`{"id":"x"}`},
		},
		{
			name: "draft-07 anchor from $id",
			in: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#pos"}},
				"definitions":{"P":{"$id":"#pos","type":"integer","minimum":1}}}`,
			want:   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"integer","minimum":1}}}`,
			accept: []string{`{"a":1}`},
			reject: []string{`{"a":0}`},
		},
		{
			name: "tree",
			in: `{"type":"object","properties":{"root":{"$ref":"#/$defs/Tree"}},"$defs":{
				"Tree":{"type":"object","properties":{"label":{"$ref":"#/$defs/Label"},"children":{"type":"array","items":{"$ref":"#/$defs/Tree"}}}},
				"Label":{"type":"string"},"Unused":{}}}`,
			want: `{"type":"object","properties":{"root":{"$ref":"#/$defs/Tree"}},"$defs":{
				"Tree":{"type":"object","properties":{"label":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Tree"}}}}}}`,
			accept: []string{`{"root":{"label":"a","children":[{"label":"b","children":[]}]}}`},
			reject: []string{`{"root":{"children":[{"label":1}]}}`},
		},
		{
			name: "linked list",
			in: `{"type":"object","properties":{"head":{"$ref":"#/$defs/Node"}},"$defs":{
				"Node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}}}}}`,
			want: `{"type":"object","properties":{"head":{"$ref":"#/$defs/Node"}},"$defs":{
				"Node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/Node"}}}}}`,
			accept: []string{`{"head":{"v":1,"next":{"v":2}}}`},
			reject: []string{`{"head":{"v":1,"next":{}}}`},
		},
		{
			name: "mutual recursion keeps only the cycle",
			in: `{"type":"object","properties":{"start":{"$ref":"#/$defs/A"}},"$defs":{
				"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"},"c":{"$ref":"#/$defs/C"}}},
				"B":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}},
				"C":{"type":"integer"}}}`,
			want: `{"type":"object","properties":{"start":{"$ref":"#/$defs/A"}},"$defs":{
				"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"},"c":{"type":"integer"}}},
				"B":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}}`,
			accept: []string{`{"start":{"b":{"a":{"c":1}}}}`},
			reject: []string{`{"start":{"b":{"a":{"c":"x"}}}}`},
		},
		{
			name: "recursive pointer into the schema gets a definition",
			in:   `{"type":"object","properties":{"a":{"type":"object","properties":{"again":{"$ref":"#/properties/a"},"n":{"type":"integer"}}}}}`,
			want: `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},
				"$defs":{"a":{"type":"object","properties":{"again":{"$ref":"#/$defs/a"},"n":{"type":"integer"}}}}}`,
			accept: []string{`{"a":{"again":{"again":{"n":1}}}}`},
			reject: []string{`{"a":{"again":{"n":"x"}}}`},
		},
		{
			name: "new definition names do not collide",
			in: `{"type":"object","properties":{"a":{"properties":{"x":{"$ref":"#/properties/a"}}},"b":{"$ref":"#/$defs/a"}},
				"$defs":{"a":{"properties":{"y":{"$ref":"#/$defs/a"}}}}}`,
			want: `{"type":"object","properties":{"a":{"$ref":"#/$defs/a-2"},"b":{"$ref":"#/$defs/a"}},
				"$defs":{"a":{"properties":{"y":{"$ref":"#/$defs/a"}}},"a-2":{"properties":{"x":{"$ref":"#/$defs/a-2"}}}}}`,
			accept: []string{`{"a":{"x":{"x":{}}},"b":{"y":{}}}`},
			reject: []string{`[]`},
		},
		{
			name: "remote refs untouched",
			in: `{"type":"object","properties":{"r":{"$ref":"https://example.com/remote.json"},"o":{"$ref":"other.json#/$defs/x"},
				"l":{"$ref":"#/$defs/L"}},"$defs":{"L":{"type":"integer"},"x":{"type":"string"}}}`,
			want: `{"type":"object","properties":{"r":{"$ref":"https://example.com/remote.json"},"o":{"$ref":"other.json#/$defs/x"},
				"l":{"type":"integer"}}}`,
			accept: []string{`{"r":"s","o":"s","l":1}`},
			reject: []string{`{"l":"x"}`, `{"r":1}`, `{"o":1}`},
		},
		{
			name: "fragment in a nested resource resolves in that resource",
			in: `{"type":"object","properties":{"item":{"$ref":"https://example.com/item"}},"$defs":{"p":{"type":"string"},
				"item":{"$id":"https://example.com/item","type":"object","properties":{"n":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"integer"}}}}}`,
			want:   `{"type":"object","properties":{"item":{"$id":"https://example.com/item","type":"object","properties":{"n":{"type":"integer"}}}}}`,
			accept: []string{`{"item":{"n":1}}`},
			reject: []string{`{"item":{"n":"s"}}`},
		},
		{
			name: "root $id and URIs that name it",
			in: `{"$id":"https://example.com/schemas/root.json","type":"object","properties":{
				"a":{"$ref":"https://example.com/schemas/root.json#/$defs/A"},"b":{"$ref":"item.json"}},
				"$defs":{"A":{"type":"integer"},"item":{"$id":"item.json","type":"string"}}}`,
			want: `{"$id":"https://example.com/schemas/root.json","type":"object","properties":{
				"a":{"type":"integer"},"b":{"$id":"item.json","type":"string"}}}`,
			accept: []string{`{"a":1,"b":"s"}`},
			reject: []string{`{"a":"s"}`, `{"b":1}`},
		},
		{
			name: "shared schema with an $id is kept, not copied",
			in: `{"type":"object","properties":{"a":{"$ref":"https://example.com/pt"},"b":{"$ref":"https://example.com/pt"}},
				"$defs":{"pt":{"$id":"https://example.com/pt","type":"object","properties":{"x":{"type":"number"}}}}}`,
			want: `{"type":"object","properties":{"a":{"$ref":"#/$defs/pt"},"b":{"$ref":"#/$defs/pt"}},
				"$defs":{"pt":{"$id":"https://example.com/pt","type":"object","properties":{"x":{"type":"number"}}}}}`,
			accept: []string{`{"a":{"x":1},"b":{"x":2}}`},
			reject: []string{`{"b":{"x":"s"}}`},
		},
		{
			name: "kept schema referenced from a nested resource uses the root's URI",
			in: `{"$id":"https://example.com/root.json","type":"object","properties":{"r":{"$ref":"https://example.com/r"}},"$defs":{
				"r":{"$id":"https://example.com/r","type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{
					"N":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/N"}}}}}}}`,
			want: `{"$id":"https://example.com/root.json","type":"object","properties":{"r":{"$id":"https://example.com/r","type":"object",
				"properties":{"n":{"$ref":"https://example.com/root.json#/$defs/N"}}}},"$defs":{
				"N":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/N"}}}}}`,
			accept: []string{`{"r":{"n":{"v":1,"next":{"v":2}}}}`},
			reject: []string{`{"r":{"n":{"next":{"v":"x"}}}}`},
		},
		{
			name: "preserved verbatim",
			in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
				"x-mcp-header":{"$ref":"#/$defs/T"},"x-anything":[1,{"$ref":"x"}],
				"properties":{"title":{"type":"string"},"$ref":{"type":"string","default":{"$ref":"#/$defs/T"},"examples":[{"$ref":"#/nowhere"}]},
				"$defs":{"enum":[{"$ref":"#/$defs/T"}]},"c":{"const":{"$ref":"#/$defs/T"}},"t":{"$ref":"#/$defs/T"}},
				"$defs":{"T":{"type":"boolean"}}}`,
			want: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,
				"x-mcp-header":{"$ref":"#/$defs/T"},"x-anything":[1,{"$ref":"x"}],
				"properties":{"title":{"type":"string"},"$ref":{"type":"string","default":{"$ref":"#/$defs/T"},"examples":[{"$ref":"#/nowhere"}]},
				"$defs":{"enum":[{"$ref":"#/$defs/T"}]},"c":{"const":{"$ref":"#/$defs/T"}},"t":{"type":"boolean"}}}`,
			accept: []string{`{"title":"x","$ref":"y","$defs":{"$ref":"#/$defs/T"},"c":{"$ref":"#/$defs/T"},"t":true}`},
			reject: []string{`{"other":1}`, `{"t":1}`, `{"c":{}}`, `{"$defs":{}}`},
		},
		{
			name: "ref chains and refs into a definition's inside",
			in: `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/C/properties/x"}},"$defs":{
				"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/C"},"C":{"type":"object","properties":{"x":{"type":"integer","minimum":3}}}}}`,
			want: `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"integer","minimum":3}}},
				"b":{"type":"integer","minimum":3}}}`,
			accept: []string{`{"a":{"x":3},"b":4}`},
			reject: []string{`{"a":{"x":2}}`, `{"b":1}`},
		},
		{
			name: "every keyword that holds schemas",
			in: `{"type":"object","properties":{"v":{
				"additionalProperties":{"$ref":"#/$defs/I"},"patternProperties":{"^p":{"$ref":"#/$defs/I"}},
				"propertyNames":{"$ref":"#/$defs/N"},"dependentSchemas":{"d":{"$ref":"#/$defs/R"}},
				"not":{"$ref":"#/$defs/S"},"if":{"$ref":"#/$defs/R"},"then":{"$ref":"#/$defs/R"},"else":{"$ref":"#/$defs/R"},
				"anyOf":[{"$ref":"#/$defs/O"}],"oneOf":[{"$ref":"#/$defs/O"}]}},"$defs":{
				"I":{"type":"integer"},"N":{"maxLength":3},"R":{"required":["q"]},"S":{"type":"string"},"O":{"type":"object"}}}`,
			want: `{"type":"object","properties":{"v":{
				"additionalProperties":{"type":"integer"},"patternProperties":{"^p":{"type":"integer"}},
				"propertyNames":{"maxLength":3},"dependentSchemas":{"d":{"required":["q"]}},
				"not":{"type":"string"},"if":{"required":["q"]},"then":{"required":["q"]},"else":{"required":["q"]},
				"anyOf":[{"type":"object"}],"oneOf":[{"type":"object"}]}}}`,
			accept: []string{`{"v":{"q":1,"pa":2}}`},
			reject: []string{`{"v":{"q":1,"long":1}}`, `{"v":{"q":1,"pa":"x"}}`, `{"v":{"a":1}}`, `{"v":"s"}`},
		},
		{
			name: "array keywords",
			in: `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"$ref":"#/$defs/S"}],"items":{"$ref":"#/$defs/I"},
				"contains":{"$ref":"#/$defs/I"},"unevaluatedItems":{"$ref":"#/$defs/I"}}},"$defs":{"S":{"type":"string"},"I":{"type":"integer"}}}`,
			want: `{"type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"},
				"contains":{"type":"integer"},"unevaluatedItems":{"type":"integer"}}}}`,
			accept: []string{`{"t":["a",1,2]}`},
			reject: []string{`{"t":[1]}`, `{"t":["a","b"]}`, `{"t":["a"]}`},
		},
	}
}
