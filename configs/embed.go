// Package configs holds strata's commented reference configuration. The binary embeds it, and it is
// also the default configuration: there is exactly one place where defaults are written down.
package configs

import _ "embed"

// Reference is the text of strata.yaml: every option, documented, with its default value.
//
//go:embed strata.yaml
var Reference []byte
