package skills_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ExampleFromFS() {
	// An embed.FS works the same: fs.Sub(embedded, "testdata/skills").
	set, err := skills.FromFS(os.DirFS("testdata/skills"), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range set.Skills() {
		fmt.Println(k.URI(), len(k.Files()), "files")
	}

	// skills/get answers with a skill's entry: its frontmatter verbatim,
	// and every file's URI, digest and size.
	k, _ := set.Get("skill://git-workflow/SKILL.md")
	entry := k.Entry()
	fmt.Println(string(entry.Frontmatter))
	for _, r := range entry.Resources.Files {
		fmt.Println(r.URI, r.Size, r.Digest[:15]+"...")
	}

	// resources/read serves a file's bytes.
	f, _ := set.Lookup("skill://git-workflow/references/style.md")
	data, err := f.ReadAll()
	if err != nil {
		log.Fatal(err)
	}
	title, _, _ := bytes.Cut(data, []byte("\n"))
	fmt.Printf("%s, %d bytes: %s\n", f.MIMEType, len(data), title)
	// Output:
	// skill://acme/billing/refunds/SKILL.md 3 files
	// skill://git-workflow/SKILL.md 2 files
	// skill://pdf-forms/SKILL.md 4 files
	// skill://pdf-forms/fill-form/SKILL.md 2 files
	// {"name":"git-workflow","description":"Follow the team's Git conventions for branches, commits and pull requests.","license":"Apache-2.0","metadata":{"author":"mcpkit","version":"1.2"},"allowed-tools":["Bash(git:*)","Read"]}
	// skill://git-workflow/SKILL.md 426 sha256:b9083246...
	// skill://git-workflow/references/style.md 122 sha256:ae8900a2...
	// text/markdown, 122 bytes: # Commit style
}

func ExampleNew() {
	md := []byte("---\nname: greeting\ndescription: Greet the user by name.\n---\n\nSay hello.\n")
	set, err := skills.New([]skills.Def{{
		Path:  "team/greeting",
		Files: map[string][]byte{"SKILL.md": md},
	}}, &skills.Options{Prefix: "acme"})
	if err != nil {
		log.Fatal(err)
	}
	k := set.Skills()[0]
	fmt.Println(k.URI(), k.Name())
	fmt.Println(k.Entry().Resources.Files[0].Size, "bytes")
	// Output:
	// skill://acme/team/greeting/SKILL.md greeting
	// 72 bytes
}

func ExampleServe() {
	set, err := skills.FromFS(os.DirFS("testdata/skills"), nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpkit.NewServer(&mcp.Implementation{Name: "skills", Version: "1"}, nil)
	if err := skills.Serve(srv, set, &skills.ServeOptions{TTL: time.Minute}); err != nil {
		log.Fatal(err)
	}

	// A host: a client that sends the extension's methods.
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	_ = mcp.AddSendingCustomMethod[*skills.ListParams, *skills.ListResult](client, skills.MethodList)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	_, declared := cs.InitializeResult().Capabilities.Extensions[skills.ExtensionID]
	fmt.Println("declared:", declared)
	list, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range list.Skills {
		fmt.Println(e.URI, len(e.Resources.Files), "files")
	}
	// Every file is a resource; this one is the second of git-workflow's.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: list.Skills[1].Resources.Files[1].URI})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].URI, res.Contents[0].MIMEType)
	// Output:
	// declared: true
	// skill://acme/billing/refunds/SKILL.md 3 files
	// skill://git-workflow/SKILL.md 2 files
	// skill://pdf-forms/SKILL.md 4 files
	// skill://pdf-forms/fill-form/SKILL.md 2 files
	// skill://git-workflow/references/style.md text/markdown
}
