// Walks over a parsed template: the identifiers it names, and the copy cut from a node on.
package main

import (
	"strings"
	"text/template"
	"text/template/parse"
)

// identifiers: every field and variable name the template and its defined templates use,
// lowercased.
func identifiers(t *template.Template) map[string]bool {
	names := map[string]bool{}
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		for _, n := range tt.Root.Nodes {
			for _, name := range nodeIdentifiers(n) {
				names[strings.ToLower(name)] = true
			}
		}
	}
	return names
}

func nodeIdentifiers(n parse.Node) []string {
	var names []string
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			names = append(names, nodeIdentifiers(c)...)
		}
	case *parse.TemplateNode:
		if n.Pipe != nil {
			names = nodeIdentifiers(n.Pipe)
		}
	case *parse.ActionNode:
		names = nodeIdentifiers(n.Pipe)
	case *parse.IfNode:
		names = branchIdentifiers(&n.BranchNode)
	case *parse.RangeNode:
		names = branchIdentifiers(&n.BranchNode)
	case *parse.WithNode:
		names = branchIdentifiers(&n.BranchNode)
	case *parse.PipeNode:
		for _, c := range n.Cmds {
			for _, a := range c.Args {
				names = append(names, nodeIdentifiers(a)...)
			}
		}
	case *parse.FieldNode:
		names = n.Ident
	case *parse.VariableNode:
		names = n.Ident
	}
	return names
}

func branchIdentifiers(b *parse.BranchNode) []string {
	names := nodeIdentifiers(b.Pipe)
	for _, l := range []*parse.ListNode{b.List, b.ElseList} {
		if l != nil {
			names = append(names, nodeIdentifiers(l)...)
		}
	}
	return names
}

// cutFrom removes, in place, every node for which drop says true (drop sees nodes in document
// order: the branches of if, with and range, and the arguments of actions, but not their
// conditions), and an action or command left without arguments. A branch list cut away whole
// stays as an empty list.
func cutFrom(n parse.Node, drop func(parse.Node) bool) parse.Node {
	if drop(n) {
		return nil
	}
	switch t := n.(type) {
	case *parse.ListNode:
		var kept []parse.Node
		for _, c := range t.Nodes {
			if c := cutFrom(c, drop); c != nil {
				kept = append(kept, c)
			}
		}
		t.Nodes = kept
	case *parse.IfNode:
		cutBranch(&t.BranchNode, drop)
	case *parse.WithNode:
		cutBranch(&t.BranchNode, drop)
	case *parse.RangeNode:
		cutBranch(&t.BranchNode, drop)
	case *parse.ActionNode:
		pipe := cutFrom(t.Pipe, drop)
		if pipe == nil {
			return nil
		}
		t.Pipe = pipe.(*parse.PipeNode)
	case *parse.PipeNode:
		var commands []*parse.CommandNode
		for _, c := range t.Cmds {
			var args []parse.Node
			for _, a := range c.Args {
				if a := cutFrom(a, drop); a != nil {
					args = append(args, a)
				}
			}
			if len(args) == 0 {
				return nil
			}
			c.Args = args
			commands = append(commands, c)
		}
		if len(commands) == 0 {
			return nil
		}
		t.Cmds = commands
	}
	return n
}

func cutBranch(b *parse.BranchNode, drop func(parse.Node) bool) {
	b.List = cutList(b.List, drop)
	if b.ElseList != nil {
		b.ElseList = cutList(b.ElseList, drop)
	}
}

func cutList(l *parse.ListNode, drop func(parse.Node) bool) *parse.ListNode {
	if kept, ok := cutFrom(l, drop).(*parse.ListNode); ok {
		return kept
	}
	return &parse.ListNode{NodeType: parse.NodeList, Pos: l.Pos}
}
