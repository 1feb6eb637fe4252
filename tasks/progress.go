package tasks

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// StatusInterval is the shortest time between two writes of a task's
// status message from the progress its work reports: reports closer
// together are coalesced, the latest kept.
const StatusInterval = time.Second

// statusWriter turns the progress a task's work reports
// (mcpkit.ReportProgress) into the task's status message, in the store, so
// that tasks/get shows it on any replica. It writes from a goroutine of its
// own, at most once per StatusInterval, and never blocks the work.
type statusWriter struct {
	m   *Manager
	id  string
	ctx context.Context

	mu      sync.Mutex
	pending string
	has     bool // pending holds a message not written yet
	writing bool
	stopped bool
}

func (w *statusWriter) report(done, total float64, message string) {
	text := statusText(done, total, message)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.pending, w.has = text, true
	if !w.writing {
		w.writing = true
		go w.write()
	}
}

func (w *statusWriter) write() {
	for {
		w.mu.Lock()
		text, has := w.pending, w.has
		w.has = false
		if !has || w.stopped {
			w.writing = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		_, err := w.m.store.Update(w.ctx, w.id, func(t *Task) error {
			if t.Status == Working {
				t.StatusMessage = text
			}
			return nil
		})
		if err != nil {
			w.m.logger.Warn("tasks: the status message was not stored", "task", w.id, "err", err)
		}
		time.Sleep(StatusInterval)
	}
}

// stop ends the writing: the task's outcome follows.
func (w *statusWriter) stop() {
	w.mu.Lock()
	w.stopped, w.has = true, false
	w.mu.Unlock()
}

// statusText is the status message of a progress report: the message and
// how far the work got, "indexing (3/10)".
func statusText(done, total float64, message string) string {
	var count string
	switch {
	case total > 0:
		count = fmt.Sprintf("%g/%g", done, total)
	case done > 0:
		count = fmt.Sprintf("%g", done)
	}
	switch {
	case message == "":
		return count
	case count == "":
		return message
	}
	return message + " (" + count + ")"
}
