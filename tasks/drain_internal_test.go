package tasks

import (
	"encoding/json"
	"testing"
	"time"
)

// A tasks/update that completes a task's answers on a draining replica
// hands the round over: the task is working, without a lease, the answers
// kept, for a tasks/get elsewhere to take up; no round runs here.
func TestUpdateWhileDrainingHandsOver(t *testing.T) {
	store := NewMemoryStore(nil)
	m := NewManager(&Options{Store: store})
	NewManager(&Options{Store: store}) // another replica's, which takes tasks up
	now := time.Now()
	who := principal(nil, nil)
	err := store.Create(t.Context(), &Task{
		ID: "t1", Owner: who, Tool: "ask", Status: InputRequired,
		InputRequests: json.RawMessage(`{"k":{"method":"elicitation/create","params":{"message":"ok?"}}}`),
		CreatedAt:     now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	m.update(t.Context(), nil, who, nil, &taskParams{TaskID: "t1", InputResponses: json.RawMessage(`{"k":{"action":"accept"}}`)})
	got, err := store.Get(t.Context(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if !handedOver(got) || got.StatusMessage != handedOverMessage || string(got.InputResponses) != `{"k":{"action":"accept"}}` {
		t.Errorf("task after tasks/update on a draining replica: %+v", got)
	}
	if len(m.running) != 0 {
		t.Errorf("a round runs on the draining replica")
	}
}
