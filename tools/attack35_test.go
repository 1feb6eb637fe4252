package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/tools"
)

type attack35Out struct {
	R int `json:"r" descriptoin:"the result"`
}

type attack35In struct {
	A int    `json:"a" minimun:"0"`
	D int    `json:"d" minimum:"abc"`
	E int    `json:"e" maximum:"xyz"`
	F string `json:"f" descripton:"f"`
}

type attack35Clean struct {
	A int `json:"a" minimun:"0"`
}

// TestAttack35TagProblemsAllAtOnce: issue 35 asks for every struct-tag
// problem in one run. Typos of keys are collected, but a tag value that
// cannot be read (minimum:"abc") ends the inference of the input type,
// so that the fields after it (a bad maximum, a misspelt description) are
// reported in later runs only; and the output type is not looked at when
// the input type has a problem, so that its typo takes a run of its own.
func TestAttack35TagProblemsAllAtOnce(t *testing.T) {
	_, err := tools.New("x", func(context.Context, attack35In) (attack35Out, error) { return attack35Out{}, nil }, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"minimun"`, `"abc"`, `"xyz"`, `"descripton"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s:\n%v", want, err)
		}
	}
	_, err = tools.New("x", func(context.Context, attack35Clean) (attack35Out, error) { return attack35Out{}, nil }, nil)
	if err == nil || !strings.Contains(err.Error(), `"descriptoin"`) {
		t.Errorf("a typo of the input type and one of the output type are not reported together:\n%v", err)
	}
}
