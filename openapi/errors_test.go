package openapi_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"

	"github.com/mcpkit/mcpkit/openapi"
)

// TestSwagger2Document: a Swagger 2.0 document (the Petstore's) is
// refused with ErrSwagger2, whose text says how to convert it; converted
// as it says, it loads.
func TestSwagger2Document(t *testing.T) {
	data := readSpec(t, "petstore-2.0.json")
	_, err := openapi.Load(data)
	if !errors.Is(err, openapi.ErrSwagger2) || !strings.Contains(err.Error(), "Swagger 2.0") || !strings.Contains(err.Error(), "openapi2conv.ToV3") {
		t.Fatalf("Load: %v", err)
	}
	var v2 openapi2.T
	if err := json.Unmarshal(data, &v2); err != nil {
		t.Fatal(err)
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		t.Fatal(err)
	}
	converted, err := json.Marshal(v3)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi.Load(converted)
	if err != nil {
		t.Fatalf("Load of the converted document: %v", err)
	}
	tools, err := doc.Tools(&openapi.Options{Handler: http.NotFoundHandler(), OperationIDs: []string{"getPetById"}})
	if err != nil || len(tools) != 1 {
		t.Fatalf("Tools: %v, %d tools", err, len(tools))
	}
	// YAML says it in its own way.
	if _, err := openapi.Load([]byte("swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n")); !errors.Is(err, openapi.ErrSwagger2) {
		t.Errorf("Load of YAML: %v", err)
	}
}

// TestUnsupportedBodyNamesTheOption: Linode's thumbnail upload requires an
// image/png body, which no tool argument can carry; the error says so and
// names the option that skips such operations.
func TestUnsupportedBodyNamesTheOption(t *testing.T) {
	_, err := realDoc(t, linodeDoc).Tools(&openapi.Options{Handler: http.NotFoundHandler(), OperationIDs: []string{"setClientThumbnail"}})
	if err == nil || !strings.Contains(err.Error(), "image/png") || !strings.Contains(err.Error(), "Options.OnSkip") {
		t.Fatalf("Tools: %v", err)
	}
}
