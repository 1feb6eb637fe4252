package deref

import (
	"encoding/json"
	"testing"
)

// orderSchema is the input schema of a typical tool generated from Go
// types: nested structs, an Address shared three times, Money twice.
const orderSchema = `{
  "type": "object",
  "properties": {
    "customer": {
      "type": "object",
      "properties": {
        "name": {"type": "string", "description": "Full name"},
        "email": {"type": "string", "format": "email"},
        "address": {"$ref": "#/$defs/Address"}
      },
      "required": ["name", "email"],
      "additionalProperties": false
    },
    "shipping": {"$ref": "#/$defs/Address", "description": "Where to ship"},
    "billing": {"$ref": "#/$defs/Address", "description": "Where to bill"},
    "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/LineItem"}},
    "total": {"$ref": "#/$defs/Money"},
    "notes": {"type": ["string", "null"]}
  },
  "required": ["customer", "items"],
  "additionalProperties": false,
  "$defs": {
    "Address": {
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"},
        "postalCode": {"type": "string", "pattern": "^[0-9A-Z -]{3,10}$"},
        "country": {"type": "string", "enum": ["DE", "FR", "GB", "US"]}
      },
      "required": ["street", "city", "country"],
      "additionalProperties": false
    },
    "LineItem": {
      "type": "object",
      "properties": {
        "sku": {"type": "string"},
        "quantity": {"type": "integer", "minimum": 1},
        "price": {"$ref": "#/$defs/Money"}
      },
      "required": ["sku", "quantity"],
      "additionalProperties": false
    },
    "Money": {
      "type": "object",
      "properties": {
        "amount": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]{2})?$"},
        "currency": {"type": "string", "minLength": 3, "maxLength": 3}
      },
      "required": ["amount", "currency"],
      "additionalProperties": false
    }
  }
}`

func BenchmarkDereference(b *testing.B) {
	for _, bm := range []struct {
		name   string
		schema string
	}{
		{"order", orderSchema},
		{"no-ref", `{"type":"object","properties":{"q":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["q"]}`},
		{"fan-out-20", fanOut(20, 2)},
	} {
		in := json.RawMessage(bm.schema)
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := Dereference(in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestOrderSchema(t *testing.T) {
	out, err := Dereference([]byte(orderSchema), nil)
	if err != nil {
		t.Fatal(err)
	}
	if refs := refsIn(t, out); len(refs) != 0 {
		t.Errorf("refs left: %q", refs)
	}
	before, after := mustResolve(t, []byte(orderSchema)), mustResolve(t, out)
	for _, inst := range []string{
		`{"customer":{"name":"A","email":"a@b.c","address":{"street":"s","city":"c","country":"DE"}},"items":[{"sku":"x","quantity":1,"price":{"amount":"1.00","currency":"EUR"}}],"billing":{"street":"s","city":"c","country":"FR"}}`,
		`{"customer":{"name":"A","email":"a@b.c"},"items":[{"sku":"x","quantity":1}],"shipping":{"street":"s","city":"c","country":"XX"}}`,
		`{"customer":{"name":"A","email":"a@b.c"},"items":[{"sku":"x","quantity":1,"price":{"amount":"1","currency":"EURO"}}]}`,
		`{"customer":{"name":"A","email":"a@b.c"},"items":[]}`,
	} {
		v := decode(t, inst)
		if e1, e2 := before.Validate(v), after.Validate(v); (e1 == nil) != (e2 == nil) {
			t.Errorf("on %s: input %v, output %v", inst, e1, e2)
		}
	}
}
