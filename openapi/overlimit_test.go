package openapi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/openapi"
)

// TestInlineSchemaPastLimitReported: a body written in the operation
// itself is never cut, so its tool's input schema may pass
// MaxInputSchemaBytes; OnDegrade is told, naming the option, so that the
// limit is never passed unheard. An operation within the limit is not
// reported.
func TestInlineSchemaPastLimitReported(t *testing.T) {
	var props []string
	for i := range 60 {
		props = append(props, fmt.Sprintf(`"field_%02d":{"type":"string","description":"%s"}`, i, strings.Repeat("d", 40)))
	}
	spec := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
		"/big":{"post":{"operationId":"big","requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}},"responses":{"204":{"description":"x"}}}},
		"/small":{"post":{"operationId":"small","requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}},"responses":{"204":{"description":"x"}}}}}}`
	doc, err := openapi.Load([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	heard := map[string][]error{}
	tools, err := doc.Tools(&openapi.Options{Handler: &api{}, MaxInputSchemaBytes: 1024,
		OnDegrade: func(op *openapi.Operation, err error) { heard[op.OperationID] = append(heard[op.OperationID], err) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	if errs := heard["big"]; len(errs) != 1 || !errors.Is(errs[0], openapi.ErrDegraded) || !strings.Contains(errs[0].Error(), "past MaxInputSchemaBytes 1024") {
		t.Errorf("OnDegrade heard of big: %v", errs)
	}
	if errs := heard["small"]; len(errs) != 0 {
		t.Errorf("OnDegrade heard of small: %v", errs)
	}
}
