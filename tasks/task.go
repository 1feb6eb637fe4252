package tasks

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
)

// ExtensionID identifies the tasks extension (SEP-2663) in the extensions
// of client and server capabilities.
const ExtensionID = "io.modelcontextprotocol/tasks"

// Status is the state of a task, as tasks/get reports it.
type Status string

// The statuses of SEP-2663. Completed, Failed and Cancelled are terminal: a
// task never leaves them.
const (
	Working       Status = "working"        // the work is running
	InputRequired Status = "input_required" // the work waits for answers from the client (tasks/update)
	Completed     Status = "completed"      // the work returned a result, which may have isError set
	Failed        Status = "failed"         // the work ended in a JSON-RPC error, or its server was lost
	Cancelled     Status = "cancelled"      // the client cancelled the task before it finished
)

// Terminal reports whether s is a status a task never leaves.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// A Task is a task as a [Store] keeps it. Stores hold copies: a Task
// returned by a Store belongs to the caller, except for the bytes of its
// JSON fields (Arguments, Result, Error.Data, ...), which copies share and
// nobody writes: the store, the [Manager] and the work of the task read
// one copy of a call's arguments. To change such a field, replace it;
// never write into its bytes.
type Task struct {
	// ID is the task's identifier, unguessable (128 random bits), but a
	// name, not a capability: every request about a task is checked
	// against Owner as well.
	ID string `json:"id"`

	// Owner is the principal that created the task (see the package
	// documentation); requests of any other principal are answered as for
	// an unknown task.
	Owner string `json:"owner"`

	// Tool and ToolVersion are the name the call reached the task's tool
	// by, as the server serves it (a mounted, namespaced or aliased name,
	// or a provider's), and the version it reached; Identity is that
	// tool's identity ([mcpkit.Tool.ID]). Every round after input reaches
	// the tool by that name pinned to that version, as the caller of the
	// tasks/update that starts it, and runs only if it finds a task tool
	// of this Manager with that identity: the task's own tool, never
	// another's of the same name.
	Tool        string        `json:"tool"`
	ToolVersion string        `json:"toolVersion,omitempty"`
	Identity    mcpkit.ToolID `json:"identity"`

	// Handler names the task tool that created the task: the replica of
	// its Manager and the tool's number there. A round after input that
	// runs on that replica runs only on that very tool, not on one that
	// replaced it under the same name and version (another replica, which
	// serves the same task tools, goes by Identity). Empty in tasks stored
	// before it existed.
	Handler string `json:"handler,omitempty"`

	Status        Status    `json:"status"`
	StatusMessage string    `json:"statusMessage,omitempty"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`

	// ExpiresAt is when the store may forget the task, whatever its
	// status (the wire's ttlMs counts from CreatedAt to it); zero means
	// never.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`

	// PollInterval is the polling interval suggested to the client.
	PollInterval time.Duration `json:"pollInterval,omitempty"`

	// LeaseUntil is, while the task is not terminal, the time until which
	// the server running it vouches for it: that server renews the lease
	// while the work runs. A non-terminal task whose lease has passed lost
	// its server, and the next tasks/get ends it as failed. A working
	// task without a lease was handed over by a server that drained: the
	// next tasks/get on another server takes it up.
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`

	// Result is the CallToolResult of a completed task, as JSON.
	Result json.RawMessage `json:"result,omitempty"`

	// Error is the JSON-RPC error of a failed task.
	Error *jsonrpc.Error `json:"error,omitempty"`

	// Arguments and ProtocolVersion are those of the call, for the rounds
	// after input: any replica resumes the work with them.
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`

	// ClientCapabilities are those the call declared in its _meta
	// (2026-07-28), as JSON, for the rounds after input.
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`

	// InputRequests are, while the task is input_required, the requests
	// the work made (an mcp.InputRequestMap as JSON) that no tasks/update
	// has answered yet; InputResponses are the answers received so far,
	// and RequestState the state the work asked to get back (SEP-2322).
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
}

// clone returns a copy of t whose fields can be set without changing t.
// The bytes of its JSON fields are shared: nobody writes them (see
// [Task]), and copying them would keep a call's arguments, which may be
// large, once more for every copy.
func (t *Task) clone() *Task {
	t2 := *t
	if t.Error != nil {
		e := *t.Error
		t2.Error = &e
	}
	return &t2
}

// taskOverhead is what [Task.size] counts for a task besides the bytes of
// its strings and JSON: the struct, its error, and a store's bookkeeping.
const taskOverhead = 512

// size returns about how many bytes t takes in memory: its variable parts
// and taskOverhead.
func (t *Task) size() int64 {
	n := len(t.ID) + len(t.Owner) + len(t.Tool) + len(t.ToolVersion) + len(t.Identity.Name) + len(t.Identity.Version) + len(t.Handler) + len(t.StatusMessage) +
		len(t.Result) + len(t.Arguments) + len(t.ProtocolVersion) + len(t.ClientCapabilities) +
		len(t.InputRequests) + len(t.InputResponses) + len(t.RequestState)
	if t.Error != nil {
		n += len(t.Error.Message) + len(t.Error.Data)
	}
	return int64(n) + taskOverhead
}

// wireTask is a Task on the wire (SEP-2663, as the conformance suite
// 0.2.0-alpha.12 checks it): the CreateTaskResult of tools/call, with
// resultType "task", and the DetailedTask of tasks/get, with resultType
// "complete" and the result or error inlined.
type wireTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType,omitempty"` // empty in a notification
	TaskID         string          `json:"taskId"`
	Status         Status          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"` // null: unlimited
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

// The result types of SEP-2322 and SEP-2663.
const (
	resultTypeTask     = "task"
	resultTypeComplete = "complete"
)

// toWire returns t as the wire shows it, with resultType rt; the result
// and error are inlined for tasks/get only.
func (t *Task) toWire(rt string) *wireTask {
	w := &wireTask{
		ResultType:     rt,
		TaskID:         t.ID,
		Status:         t.Status,
		StatusMessage:  t.StatusMessage,
		CreatedAt:      t.CreatedAt.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt:  t.UpdatedAt.UTC().Format(time.RFC3339Nano),
		PollIntervalMs: t.PollInterval.Milliseconds(),
	}
	if !t.ExpiresAt.IsZero() {
		ms := max(t.ExpiresAt.Sub(t.CreatedAt).Milliseconds(), 1)
		w.TTLMs = &ms
	}
	if rt == resultTypeComplete {
		switch t.Status {
		case Completed:
			w.Result = t.Result
		case Failed:
			w.Error = t.Error
		case InputRequired:
			w.InputRequests = t.InputRequests
		}
	}
	return w
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
// RequestState is not read: this package issues none.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}
