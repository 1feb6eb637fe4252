// Package transform provides tool transforms: a new [mcpkit.Tool] derived
// from an existing one, with another name, description or metadata, and
// with its arguments renamed, redescribed, given defaults, made required or
// optional, or hidden from clients and filled in by the server.
//
// [Tool] takes the parent tool and a [Spec], whose zero fields keep what the
// parent has, and returns the derived tool, ready for [mcpkit.Server.Add].
// The parent is not modified and can be served alongside:
//
//	find, err := transform.Tool(search, transform.Spec{
//		Name: "find_documents",
//		Arguments: map[string]transform.Arg{
//			"q":    {Name: "query", Description: "Words to look for."},
//			"user": {Hide: true, ValueFunc: func(ctx context.Context, req *mcpkit.Request) (any, error) {
//				return req.TokenInfo().UserID, nil // behind auth.RequireBearerToken
//			}},
//		},
//	})
//	...
//	err = srv.Add(find)
//
// # What clients see is what is checked
//
// The derived tool's input schema is the parent's, rewritten: clients list
// it, and the server validates their calls against it, so an argument
// renamed q -> query is required, checked and reported as query, and a
// hidden one is not in the schema at all (with additionalProperties: false,
// sending it fails validation). Per call, the derived tool's handler maps
// the arguments back onto the parent's names, adds the hidden ones, drops
// any that a client sent under a hidden or an old name (so that a client
// cannot override what the server fills in), and calls the parent's
// handler. A derived tool that renames and hides nothing calls the parent's
// handler directly.
//
// [Tool] refuses, with an error, what it cannot rewrite faithfully (see its
// documentation): a derived tool is correct when it is built, or it is not
// built.
//
// # Middleware
//
// [Spec.Middleware] wraps the derived tool, outside the parent's own
// per-tool middleware, which the derived tool keeps. Both run around the
// server's validation of the derived tool's arguments, and see them under
// their new names; only the parent's handler sees the parent's names, and
// the parent's definition in req.Tool.
//
// # Deprecated aliases
//
// [Alias] keeps an old name callable after a rename or a consolidation,
// with its old argument names, absent from tools/list, and reports each use
// to a hook, so that operators know when the old name can go.
//
// # Progressive discovery
//
// [Discovery] moves a large catalog behind three meta-tools (search the
// tools, describe one, call one), so that a model's context holds three
// definitions instead of hundreds; what the meta-tools find and call is
// what the caller may see and call.
//
// # Provider-portable schemas
//
// [Portable] rewrites every input schema of a catalog into a form a model
// provider accepts ([Gemini], [OpenAIStrict], or [AllProviders], their
// intersection), computed once per tool; calls valid under the rewritten
// schema reach the tool as the original schema means them, and what the
// rewrite cannot express is still enforced. [CheckPortable] says, in a
// test, which tools a profile refuses and where (docs/portable.md).
//
// # Catalog transforms
//
// [Namespace], [Versions] and [Select] are [mcpkit.CatalogTransform]s, given
// to [mcpkit.Server.Transform]: they apply to every registered tool (or to
// those Select picks, by name or tag), including tools added later, and run
// when the registry changes, never per request. A namespaced tool is listed
// and called under its new name; a version range leaves the other versions
// out of tools/list and out of reach of pinned calls. Catalog transforms run
// in the order given, after the tool transforms above (which make the tools
// that are registered) and before visibility rules.
//
// # Options
//
// Transforms are described by option structs, [Spec] and [Arg], whose zero
// values keep what the parent has, as the SDK's options structs do.
package transform
