package proxy

import (
	"cmp"
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpkit/mcpkit"
	"github.com/mcpkit/mcpkit/skills"
)

// skillMD is the file every skill has at the root of its directory.
const skillMD = "SKILL.md"

// ListSkills returns the entries of the skills the upstream serves to c,
// read from its skills/list across every page (at most DefaultMaxPages),
// or none when the upstream does not declare the Skills extension (see
// [skills.Upstream]). It is asked on every call, as prompts/get is
// forwarded: with the credentials of [Options.TargetCredentials] (its
// target nil: the list reaches no one resource), on the caller's session
// when the upstream keeps sessions, within [Options.Timeout]; the answer
// may depend on who asks, so it is not kept. The URIs are the upstream's:
// the proxy serves its resources under them (see [Upstream.LookupResource]).
func (u *Upstream) ListSkills(ctx context.Context, c mcpkit.Caller) ([]skills.Entry, error) {
	if cat := u.served(); cat == nil || !cat.skills {
		return nil, nil
	}
	creds, err := u.targetCredentials(ctx, c, nil)
	if err != nil {
		return nil, err
	}
	principal := ""
	if c != nil {
		principal = verifiedPrincipal(c)
	}
	if d := u.opts.Timeout; d >= 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cmp.Or(d, DefaultTimeout))
		defer cancel()
	}
	var (
		entries []skills.Entry
		meta    mcp.Meta
	)
	err = u.exchange(ctx, principal, creds, &meta, false, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		entries, err = readAll(ctx, u, "skills", func(ctx context.Context, cursor string) ([]skills.Entry, string, error) {
			res, err := mcp.CallCustomMethod[*skills.ListParams, *skills.ListResult](ctx, cs, skills.MethodList, &skills.ListParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return res.Skills, res.NextCursor, nil
		})
		return err
	})
	if err != nil {
		return nil, u.failure(ctx, mcpkit.KindResource, skills.MethodList, err)
	}
	return entries, nil
}
