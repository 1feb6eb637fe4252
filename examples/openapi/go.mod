module github.com/mcpkit/mcpkit/examples/openapi

go 1.25.0

replace (
	github.com/mcpkit/mcpkit => ../..
	github.com/mcpkit/mcpkit/openapi => ../../openapi
)

require (
	github.com/mcpkit/mcpkit v0.0.0-00010101000000-000000000000
	github.com/mcpkit/mcpkit/openapi v0.0.0-00010101000000-000000000000
	github.com/modelcontextprotocol/go-sdk v1.8.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/getkin/kin-openapi v0.153.0 // indirect
	github.com/go-openapi/jsonpointer v0.22.5 // indirect
	github.com/go-openapi/swag/jsonname v0.25.5 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/otel v1.46.0 // indirect
	go.opentelemetry.io/otel/trace v1.46.0 // indirect
	go.yaml.in/yaml/v4 v4.0.0 // indirect
	golang.org/x/oauth2 v0.35.0 // indirect
	golang.org/x/sync v0.20.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
