package skills_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/mcpkit/mcpkit/skills"
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
