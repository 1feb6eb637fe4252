package openapi

import (
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"9999999999", 24 * time.Hour}, // bounded
		{"Thu, 26 Nov 2026 20:01:30 GMT", 90 * time.Second},
		{"Thu, 26 Nov 2026 19:00:00 GMT", 0}, // past
		{"Fri, 26 Nov 2027 20:00:00 GMT", 24 * time.Hour},
		{"soon", 0},
	} {
		if got := retryAfter(tc.header, clock); got != tc.want {
			t.Errorf("Retry-After %q = %v, want %v", tc.header, got, tc.want)
		}
	}
}
