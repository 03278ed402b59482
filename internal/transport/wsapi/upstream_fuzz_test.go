package wsapi

import (
	"encoding/json"
	"testing"
)

// What another node sends is remote input: any bytes are classified without failing, and a
// transaction is found only where a JSON object has one.
func FuzzTransactionOf(f *testing.F) {
	for _, s := range []string{
		`{"janus":"ack","session_id":1,"transaction":"t1"}`,
		`{"janus":"event","sender":2,"plugindata":{"plugin":"x","data":{}}}`,
		`{"transaction":7}`, `[{"transaction":"a"}]`, `{"transaction":"\u00e9\ud800"}`, `{`, ``, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tx := transactionOf(b)
		if tx == "" {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("transaction %q from a message that is not a JSON object: %q", tx, b)
		}
	})
}
