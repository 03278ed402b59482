// Package yamlfield is a strict decoder for hand-written YAML configuration
// files and the parsers for the values with units they contain (rates such as
// 10Mbps, durations such as 20ms, byte sizes, probabilities).
//
// It walks a yaml.Node tree rather than unmarshalling into structs so that
// unknown and repeated keys are errors and every problem carries its line: a
// run reports all mistakes of a file at once, each as
// "file:line: field: message". The lab scenarios and the netctl topologies
// both use it, so the two file formats report mistakes the same way.
package yamlfield
