// The values a template sees, shaped as Ollama's api package shapes them: field names for the
// template, JSON for the request, and the String forms templates print.
package main

import (
	"bytes"
	"encoding/json"
)

type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	Images     []string   `json:"images,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type ToolCall struct {
	ID       string           `json:"id,omitempty"`
	Function ToolCallFunction `json:"function"`
}

type ToolCallFunction struct {
	Index     int       `json:"index"`
	Name      string    `json:"name"`
	Arguments RawObject `json:"arguments"`
}

// RawObject is a JSON object kept as given: its keys print in the order the request had them, as
// Ollama's ordered maps print arguments and schema properties.
type RawObject struct {
	raw json.RawMessage
}

func (o *RawObject) UnmarshalJSON(data []byte) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return err
	}
	o.raw = compact.Bytes()
	return nil
}

func (o RawObject) MarshalJSON() ([]byte, error) {
	if o.raw == nil {
		return []byte("null"), nil
	}
	return o.raw, nil
}

// String is what {{ .Function.Arguments }} prints: the compact object, {} when absent.
func (o RawObject) String() string {
	if o.raw == nil {
		return "{}"
	}
	return string(o.raw)
}

type Tools []Tool

type Tool struct {
	Type     string       `json:"type"`
	Items    any          `json:"items,omitempty"`
	Function ToolFunction `json:"function"`
}

type ToolFunction struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description,omitempty"`
	Parameters  ToolFunctionParameters `json:"parameters"`
}

type ToolFunctionParameters struct {
	Type       string    `json:"type"`
	Defs       any       `json:"$defs,omitempty"`
	Items      any       `json:"items,omitempty"`
	Required   []string  `json:"required,omitempty"`
	Properties RawObject `json:"properties"`
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (t Tools) String() string        { return compactJSON(t) }
func (t Tool) String() string         { return compactJSON(t) }
func (t ToolFunction) String() string { return compactJSON(t) }
