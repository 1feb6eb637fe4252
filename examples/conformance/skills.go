package main

import (
	"embed"
	"io/fs"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/skills"
)

// skillsDir holds the skills the Skills extension's scenarios list, get and
// read.
//
//go:embed testdata/skills
var skillsDir embed.FS

// serveSkills serves the embedded skills through the Skills extension
// (SEP-2640): their files as mcpkit resources, skills/list and skills/get,
// the extension declared.
func serveSkills(srv *mcpkit.Server) error {
	dir, err := fs.Sub(skillsDir, "testdata/skills")
	if err != nil {
		return err
	}
	set, err := skills.FromFS(dir, nil)
	if err != nil {
		return err
	}
	return skills.Serve(srv, set, &skills.ServeOptions{TTL: time.Minute})
}
