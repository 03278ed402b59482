package netctl

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-rtc/strata/internal/netctl/api"
)

// Error is a controller error with the HTTP status and API error code it maps to.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// asError maps any error to an *Error (unknown errors are internal).
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: err.Error()}
}

// body is the JSON body of an error answer.
func (e *Error) body() api.Error {
	return api.Error{Error: api.ErrorBody{Code: e.Code, Message: e.Message}}
}
