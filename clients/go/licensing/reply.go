package licensing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Reply is what every generated ...WithResponse method returns: the HTTP status and the
// body as received (oapi-codegen's StatusCode and, with client-response-bytes-function,
// Bytes).
type Reply interface {
	StatusCode() int
	Bytes() []byte
}

// BusinessError is a business exception: the platform answered HTTP 299, or HTTP 200 with a
// code other than 0. The operation's typed envelope is still on the reply (JSON299 for
// HTTP 299, JSON200 otherwise): addMembers' 60027 carries both lists in its data.
type BusinessError struct {
	// Status is the HTTP status, 299 for a business exception.
	Status int
	// Code is the business code as a string ("13004", "60027").
	Code string
	// Message and Cause are the envelope's; Cause is empty when it had none.
	Message, Cause string
}

func (e *BusinessError) Error() string {
	text := e.Code + ": " + e.Message
	if e.Cause != "" {
		text += " (" + e.Cause + ")"
	}
	return inert(text)
}

// UnexpectedReply is anything but a reply envelope: a status neither service documents
// (they answer 200 or 299), or a body that is not one.
type UnexpectedReply struct {
	Status int
	// Body is the reply's first 200 bytes.
	Body []byte
}

func (e *UnexpectedReply) Error() string {
	return fmt.Sprintf("unexpected HTTP %d: %q", e.Status, e.Body)
}

// Check reads a call's reply: nil for a success (HTTP 200, code 0), a *BusinessError for a
// business exception, an *UnexpectedReply for anything else; err (the call's own, a
// transport failure) is returned as it is. It takes a call's results directly:
//
//	if err := licensing.Check(client.AllocateShellNumsWithResponse(ctx, nil, body)); err != nil { … }
func Check(reply Reply, err error) error {
	if err != nil {
		return err
	}
	status, body := reply.StatusCode(), reply.Bytes()
	var envelope struct {
		Code    json.RawMessage `json:"code"`
		Message *string         `json:"message"`
		Cause   *string         `json:"cause"`
	}
	if (status != 200 && status != 299) || json.Unmarshal(body, &envelope) != nil ||
		envelope.Code == nil || envelope.Message == nil {
		return &UnexpectedReply{Status: status, Body: body[:min(len(body), 200)]}
	}
	// An integer 0 is a success; an error's code is a string, but take a number too.
	var code string
	if json.Unmarshal(envelope.Code, &code) != nil {
		var number float64
		if json.Unmarshal(envelope.Code, &number) != nil {
			return &UnexpectedReply{Status: status, Body: body[:min(len(body), 200)]}
		}
		if status == 200 && number == 0 {
			return nil
		}
		code = string(bytes.TrimSpace(envelope.Code))
	}
	failure := &BusinessError{Status: status, Code: code, Message: *envelope.Message}
	if envelope.Cause != nil {
		failure.Cause = *envelope.Cause
	}
	return failure
}

// inert escapes what a terminal or a log would act on (control and format characters),
// since the text comes from the server.
func inert(text string) string {
	var out strings.Builder
	for _, r := range text {
		if unicode.IsGraphic(r) {
			out.WriteRune(r)
		} else {
			out.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
	}
	return out.String()
}
