// mlens-ollama-template renders an Ollama Go template (a model's TEMPLATE layer) with Go's own
// text/template, given the data Ollama's server hands a template, so ModelLens shows the prompt
// Ollama would build byte for byte.
//
// Input (stdin, one JSON object):
//
//	{"template": "...", "messages": [...], "tools": [...], "prompt": "", "suffix": "",
//	 "think": false, "is_think_set": false}
//
// messages: {"role", "content", "thinking", "tool_name", "tool_calls": [{"function":
// {"index", "name", "arguments": {...}}}]}; tools: {"type", "function": {"name",
// "description", "parameters": {"type", "required", "properties": {...}}}}.
//
// Output: the rendered prompt on stdout, exit 0. A template that does not parse or fails to
// execute: Go's error text (which names the line and column) on stderr, exit 1; bad input: exit 2.
//
// The data model is Ollama's template package (template/template.go, api/types.go):
//   - the template is parsed with missingkey=zero and a "json" function; a template naming
//     neither .Messages nor .Response gets {{ .Response }} appended;
//   - messages are collated: consecutive messages of one role (tool messages excepted) are joined
//     with a blank line, and every system message's content joined with blank lines is .System;
//   - with a prompt and a suffix, the template runs once on {Prompt, Suffix, Response: ""};
//   - a template that names .Messages runs once on {System, Messages, Tools, Response: "",
//     Think, IsThinkSet};
//   - any other template (the legacy form) runs once per user turn on {System, Prompt, Response},
//     and the last turn with everything from the first {{ .Response }} on cut away, so the prompt
//     ends where the model's answer starts;
//   - tool and tool-call values print as Ollama prints them: a tool, its function and a call's
//     arguments as compact JSON, struct fields in Ollama's order, object keys in the order given.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"
	"text/template/parse"
)

type request struct {
	Template   string    `json:"template"`
	Messages   []Message `json:"messages"`
	Tools      Tools     `json:"tools"`
	Prompt     string    `json:"prompt"`
	Suffix     string    `json:"suffix"`
	Think      bool      `json:"think"`
	IsThinkSet bool      `json:"is_think_set"`
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(2, "reading the request: "+err.Error())
	}
	var req request
	decoder := json.NewDecoder(bytes.NewReader(input))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&req); err != nil {
		fail(2, "the request is not the expected JSON: "+err.Error())
	}
	var out bytes.Buffer
	if err := render(&out, req); err != nil {
		fail(1, err.Error())
	}
	os.Stdout.Write(out.Bytes())
}

func fail(code int, message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(code)
}

var functions = template.FuncMap{
	"json": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
}

// render applies the template to the request the way Ollama's server does.
func render(w *bytes.Buffer, req request) error {
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(functions).Parse(req.Template)
	if err != nil {
		return err
	}
	names := identifiers(tmpl)
	if !names["messages"] && !names["response"] {
		tmpl.Tree.Root.Nodes = append(tmpl.Tree.Root.Nodes, responseAction())
	}
	system, messages := collate(req.Messages)
	if req.Prompt != "" && req.Suffix != "" {
		return tmpl.Execute(w, map[string]any{"Prompt": req.Prompt, "Suffix": req.Suffix, "Response": "",
			"Think": req.Think, "IsThinkSet": req.IsThinkSet})
	}
	if names["messages"] || names["document"] {
		return tmpl.Execute(w, map[string]any{"System": system, "Messages": messages, "Tools": req.Tools,
			"Response": "", "Think": req.Think, "IsThinkSet": req.IsThinkSet, "Query": "", "Document": "", "Instruction": ""})
	}
	return renderLegacy(w, tmpl, messages, req)
}

// renderLegacy runs a System/Prompt/Response template once per exchange.
func renderLegacy(w *bytes.Buffer, tmpl *template.Template, messages []*Message, req request) error {
	var system, prompt, response string
	values := func() map[string]any {
		return map[string]any{"System": system, "Prompt": prompt, "Response": response, "Think": req.Think, "IsThinkSet": req.IsThinkSet}
	}
	flush := func() error {
		if err := tmpl.Execute(w, values()); err != nil {
			return err
		}
		system, prompt, response = "", "", ""
		return nil
	}
	for _, m := range messages {
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := flush(); err != nil {
					return err
				}
			}
			system = m.Content
		case "user":
			if response != "" {
				if err := flush(); err != nil {
					return err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	// The last exchange stops where the answer would start: every node from the first
	// .Response field on is cut.
	cut := false
	root := cutFrom(tmpl.Tree.Root.Copy(), func(n parse.Node) bool {
		if field, ok := n.(*parse.FieldNode); ok && contains(field.Ident, "Response") {
			cut = true
			return false
		}
		return cut
	})
	last := template.Must(template.New("").AddParseTree("", &parse.Tree{Root: root.(*parse.ListNode)}))
	return last.Execute(w, values())
}

// collate joins consecutive messages of one role (tool messages stay apart) and gathers the system
// messages' contents.
func collate(in []Message) (string, []*Message) {
	var system []string
	var out []*Message
	for i := range in {
		m := &in[i]
		if m.Role == "system" {
			system = append(system, m.Content)
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != "tool" {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	return strings.Join(system, "\n\n"), out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func responseAction() *parse.ActionNode {
	field := &parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}
	command := &parse.CommandNode{NodeType: parse.NodeCommand, Args: []parse.Node{field}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{command}}}
}
