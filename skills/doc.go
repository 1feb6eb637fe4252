// Package skills provides the data layer of the Skills extension (SEP-2640,
// io.modelcontextprotocol/skills): skills loaded from a directory or defined
// in Go, their skill:// URIs, and the wire types of skills/list and
// skills/get.
//
// A skill is a directory holding a SKILL.md (YAML frontmatter with at least
// name and description, per the Agent Skills format) and any other files.
// [FromFS] loads every skill of an fs.FS (embed.FS or os.DirFS); [New] takes
// skills defined in Go. Both check every rule at load and refuse the whole
// set on the first broken one, so a server never publishes a skill a host
// would reject:
//
//	//go:embed skills
//	var dir embed.FS
//
//	sub, _ := fs.Sub(dir, "skills")
//	set, err := skills.FromFS(sub, nil)
//	if err != nil {
//		log.Fatal(err) // errors.Is(err, skills.ErrInvalidName), ...
//	}
//	for _, k := range set.Skills() {
//		entry := k.Entry() // for skills/list: uri, frontmatter, digests and sizes
//		_ = entry
//	}
//	f, ok := set.Lookup("skill://git-workflow/references/style.md")
//	if ok {
//		data, err := f.ReadAll() // read now, checked against the published digest
//		_, _ = data, err
//	}
//
// A file at path p below the root is served at skill://p, after
// [Options.Prefix] if set; each segment is percent-encoded where RFC 3986
// requires it. Sizes and SHA-256 digests are computed at load; contents are
// read again on each [File.Open], and checked against them.
//
// [Serve] serves a set on an mcpkit.Server: every file a resource, tagged
// [TagPrefix] and the skill's name for visibility rules, skills/list and
// skills/get answered with what the caller may read, and the extension
// declared:
//
//	if err := skills.Serve(srv, set, &skills.ServeOptions{TTL: time.Minute}); err != nil { ... }
//
// [ServeOptions.Mounts] adds the skills of mounted servers, and
// [ServeOptions.Upstreams] those of servers further away (a proxied one:
// see [Upstream]), asked per request.
//
// [ListResult] and [GetResult] also fit the SDK's
// mcp.AddReceivingCustomMethod as they are, for a server of its own.
//
// Options are a struct, [Options], where nil means the defaults.
package skills
