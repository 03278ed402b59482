package scenario

import "github.com/strata-rtc/strata/internal/yamlfield"

// Error lists every problem found in a scenario file, each as
// "file:line: field: message". It is the shared decoder's error, kept under
// this name for callers that match it with errors.As.
type Error = yamlfield.Error

// decoder is the shared strict YAML decoder plus the scenario-specific
// field decoders defined as its methods in this package.
type decoder struct{ *yamlfield.Decoder }

type fieldFn = yamlfield.FieldFunc

var deref = yamlfield.Deref
