package sim

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/strata-rtc/strata/cc"
)

// ParamUnit is the kind of value a controller parameter takes.
type ParamUnit uint8

// Parameter units.
const (
	UnitFloat    ParamUnit = iota // a plain number
	UnitInt                       // an integer
	UnitBool                      // true/false
	UnitRate                      // a rate with a unit: 1.5Mbps
	UnitDuration                  // a duration with a unit: 100ms
	UnitBytes                     // a size with a unit: 1500B
	UnitFloats                    // a list of numbers
)

func (u ParamUnit) String() string {
	return [...]string{"number", "integer", "bool", "rate", "duration", "size", "list of numbers"}[u]
}

// ParamSpec describes one tunable parameter of a controller: a field of the
// controller's Config struct in the cc package, named in snake_case.
type ParamSpec struct {
	Name    string
	Unit    ParamUnit
	Default string
	field   []int
}

// ParamValue is a parsed parameter value; which field is used depends on
// the parameter's unit (rates in bit/s, durations, sizes in bytes in F).
type ParamValue struct {
	F float64
	B bool
	D time.Duration
	L []float64
}

// Params maps parameter names to values.
type Params map[string]ParamValue

var (
	bitrateType  = reflect.TypeOf(cc.Bitrate(0))
	durationType = reflect.TypeOf(time.Duration(0))
)

// paramSpecs lists the settable fields of a Config struct.
func paramSpecs(cfg any) []ParamSpec {
	v := reflect.ValueOf(cfg)
	t := v.Type()
	var out []ParamSpec
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		unit, ok := unitOf(f.Type, f.Name)
		if !ok {
			continue
		}
		out = append(out, ParamSpec{Name: snake(f.Name), Unit: unit, Default: formatField(v.Field(i)), field: f.Index})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func unitOf(t reflect.Type, name string) (ParamUnit, bool) {
	switch {
	case t == bitrateType:
		return UnitRate, true
	case t == durationType:
		return UnitDuration, true
	case t.Kind() == reflect.Float64:
		return UnitFloat, true
	case t.Kind() == reflect.Bool:
		return UnitBool, true
	case t.Kind() == reflect.Int:
		if strings.HasSuffix(name, "Bytes") || strings.HasSuffix(name, "MSS") || name == "MSS" {
			return UnitBytes, true
		}
		return UnitInt, true
	case t.Kind() == reflect.Array && t.Elem().Kind() == reflect.Float64:
		return UnitFloats, true
	}
	return 0, false
}

func formatField(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case cc.Bitrate:
		return x.String()
	case time.Duration:
		return x.String()
	}
	return fmt.Sprint(v.Interface())
}

// snake converts a Go field name to snake_case, keeping acronyms together:
// InitialRate → initial_rate, ALRProbeInterval → alr_probe_interval.
func snake(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			// A trailing plural s stays with its acronym: SlowdownRTTs → slowdown_rtts.
			plural := nextLower && r[i+1] == 's' && (i+2 == len(r) || unicode.IsUpper(r[i+2]))
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower && !plural) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// applyParams sets params on the Config struct cfg points to.
func applyParams(cfg any, specs []ParamSpec, params Params) error {
	v := reflect.ValueOf(cfg).Elem()
	for name, val := range params {
		spec, ok := findSpec(specs, name)
		if !ok {
			return fmt.Errorf("unknown parameter %q", name)
		}
		f := v.FieldByIndex(spec.field)
		switch spec.Unit {
		case UnitRate:
			f.SetInt(int64(cc.BitrateFromFloat(val.F)))
		case UnitDuration:
			f.SetInt(int64(val.D))
		case UnitFloat:
			f.SetFloat(val.F)
		case UnitInt, UnitBytes:
			f.SetInt(int64(val.F))
		case UnitBool:
			f.SetBool(val.B)
		case UnitFloats:
			if len(val.L) != f.Len() {
				return fmt.Errorf("parameter %s takes %d numbers", name, f.Len())
			}
			for i, x := range val.L {
				f.Index(i).SetFloat(x)
			}
		}
	}
	return nil
}

// findSpec finds a parameter by its snake_case name or by the same name
// without underscores (rmax for r_max).
func findSpec(specs []ParamSpec, name string) (ParamSpec, bool) {
	for _, s := range specs {
		if s.Name == name || s.Alias() == name {
			return s, true
		}
	}
	return ParamSpec{}, false
}

// Alias is the parameter's name without underscores.
func (p ParamSpec) Alias() string { return strings.ReplaceAll(p.Name, "_", "") }
