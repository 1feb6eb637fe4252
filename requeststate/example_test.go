package requeststate_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/mcpkittest"
	"github.com/mcpkit/mcpkit/requeststate"
)

// ExampleSealer seals the state of an input_required result and opens it
// when the client retries the call with its answer. The same state on a
// call with other arguments is refused.
func ExampleSealer() {
	// In production: 32 random bytes from crypto/rand, shared by the replicas.
	sealer, err := requeststate.New([][]byte{[]byte("0123456789abcdef0123456789abcdef")}, nil)
	if err != nil {
		log.Fatal(err)
	}
	book := &mcpkit.Tool{Tool: mcp.Tool{Name: "book", InputSchema: &jsonschema.Schema{Type: "object"}}}
	first := mcpkittest.NewRequest(book, map[string]int{"seats": 2})
	sealed, err := sealer.Seal(first, []byte("asked for confirmation"))
	if err != nil {
		log.Fatal(err)
	}

	retry := first.Clone() // the client retries with the state
	retry.Call.Params.RequestState = sealed
	state, err := sealer.Open(retry)
	fmt.Printf("%s %v\n", state, err)

	other := mcpkittest.NewRequest(book, map[string]int{"seats": 9})
	other.Call.Params.RequestState = sealed
	_, err = sealer.Open(other)
	fmt.Println(err, errors.Is(err, requeststate.ErrInvalid))
	// Output:
	// asked for confirmation <nil>
	// invalid request state true
}
